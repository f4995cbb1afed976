/** The strip under the editor: the file's compile errors (click to jump), or a quiet "no problems". */
import { revealProblem } from './EnvironmentEditor.tsx';
import { usePlayground } from '../../store/index.ts';

/** The problems strip. */
export function ProblemsStrip() {
  const problems = usePlayground((state) => state.problems);
  if (problems.length === 0)
    return (
      <div className="problems ok" data-testid="problems">
        No problems
      </div>
    );
  return (
    <div className="problems" data-testid="problems" role="status">
      <b>
        {problems.length} error{problems.length === 1 ? '' : 's'}
      </b>
      <ul>
        {problems.slice(0, 3).map((problem, index) => (
          <li key={index}>
            <button type="button" className="link" onClick={() => revealProblem(problem.line, problem.column)}>
              Line {problem.line}: {problem.message}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
