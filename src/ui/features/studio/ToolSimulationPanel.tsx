/**
 * "Simulated tools" for imported traces whose agent used tools: who simulates them — the tab's own
 * simulator choice, lent to every run's environment as `args.simulatorClient` (the scripted
 * nearest-record simulator offline, the Judge card's model, the Policy card's model, or an endpoint) — their
 * fidelity on a held-out share of the recorded calls per round, and tasks planted backwards in the
 * simulated backend, verified by the solver with and without the tools, opened as an environment.
 * The same library as `tabrl simulate` and `tabrl synth --backwards`.
 */
import { measureToolFidelity, plantToolTasksAndOpen } from './studio-actions.ts';
import { RoleSelect } from './RoleSelect.tsx';
import { usePlayground } from '../../store/index.ts';
import { SimulatorChoice } from '../judge/SimulatorPanel.tsx';

const percent = (share: number | null) => (share === null ? '—' : `${(share * 100).toFixed(0)}%`);

/** The simulated-tools card. */
export function ToolSimulationPanel({ onOpened }: { onOpened: () => void }) {
  const traces = usePlayground((state) => state.studio.traces);
  const solver = usePlayground((state) => state.studio.solver);
  const simulation = usePlayground((state) => state.studio.toolSimulation);
  if (!traces || traces.parse.tools.length === 0) return null;
  const running = simulation.status === 'running';
  const kept = simulation.planted.filter((task) => task.kept).length;
  return (
    <section className="card" aria-labelledby="simulated-tools-heading">
      <h2 id="simulated-tools-heading">Simulated tools</h2>
      <p className="hint">
        The agent called {traces.parse.tools.map((tool) => tool.function.name).join(', ')} ({traces.parse.records.length} recorded calls). A simulator answers each call from the tool's schema and the
        recorded calls closest to it; a quarter of the calls is held out to measure how faithfully. Planted tasks ask for a value planted in the simulated backend, so their reward is exact.
      </p>
      <div className="fields">
        <SimulatorChoice testId="studio-simulator" />
      </div>
      <div className="studio-row">
        <RoleSelect label="Solver" value={solver} testId="studio-tool-solver" onChange={(value) => usePlayground.getState().setStudio({ solver: value })} />
        <button type="button" disabled={running} onClick={() => void measureToolFidelity()} data-testid="tools-fidelity">
          Measure fidelity
        </button>
        <button type="button" disabled={running} onClick={() => void plantToolTasksAndOpen().then((opened) => opened && onOpened())} data-testid="tools-plant">
          Plant tasks and open
        </button>
      </div>
      {simulation.error && (
        <p className="failure" role="alert" data-testid="tools-error">
          {simulation.error}
        </p>
      )}
      {simulation.rounds.length > 0 && (
        <div className="table-scroll">
          <table className="studio-table" data-testid="tools-fidelity-table">
            <thead>
              <tr>
                <th>Round</th>
                <th>Tool</th>
                <th>Held-out calls</th>
                <th>Exact</th>
                <th>Fields</th>
                <th>Judged</th>
              </tr>
            </thead>
            <tbody>
              {simulation.rounds.flatMap((round) =>
                [...round.rows, round.overall].map((row) => (
                  <tr key={`${round.round}-${row.tool}`} data-testid="tools-fidelity-row">
                    <td className="num">{round.round}</td>
                    <td>{row.tool === '*' ? 'all tools' : row.tool}</td>
                    <td className="num">{row.calls}</td>
                    <td className="num">{percent(row.exact)}</td>
                    <td className="num">{percent(row.fields)}</td>
                    <td className="num">{percent(row.judged)}</td>
                  </tr>
                )),
              )}
            </tbody>
          </table>
        </div>
      )}
      {simulation.job === 'plant' && simulation.status === 'done' && (
        <p className="summary-line" data-testid="tools-planted">
          <span className="chip">planted {simulation.planted.length}</span>
          <span className="chip">kept {kept}</span>
          <span className="chip">answerable without tools {simulation.planted.filter((task) => task.rejection === 'answerable-without-tools').length}</span>
          <span className="chip">unsolved with tools {simulation.planted.filter((task) => task.rejection === 'unsolved-with-tools').length}</span>
        </p>
      )}
    </section>
  );
}
