/**
 * Adding reviewed criteria to an environment file's source as a criteria judge that gates the reward:
 * a `gateByCriteria(rubric, new CriteriaRubric({...}))` line goes just before the file's `return new ...Env(`
 * (the reward becomes the file's own reward × the weighted fraction of criteria met),
 * judged by the judge lent as `args.judgeClient` (the Judge card's), else by studio's offline heuristic judge.
 * A file without a `rubric` variable or a judge gets the snippet to paste instead, with the reason.
 */
import { criteriaRubricSnippet, type Criterion } from '../../../envs/studio/index.ts';

/** The new source, or why the criteria could not be placed and the code to paste by hand. */
export type CriteriaEdit = { ok: true; source: string } | { ok: false; reason: string; snippet: string };

/** Adds `criteria` (yes/no questions) to `source` as a CriteriaRubric gating its rubric's reward. */
export function addCriteriaToSource(source: string, criteria: readonly Criterion[]): CriteriaEdit {
  const snippet = criteriaRubricSnippet(criteria);
  if (criteria.length === 0) return { ok: false, reason: 'no criteria were accepted', snippet };
  const rubricAt = source.search(/\b(?:const|let)\s+rubric\b/);
  if (rubricAt < 0) return { ok: false, reason: 'the file has no `rubric` variable to merge the criteria into', snippet };
  // The judge the file takes from args, else studio's offline heuristic judge (it checks the constraints a task states).
  if (!/\bargs\.judgeClient\b|\{[^}]*\bjudgeClient\b[^}]*\}\s*=\s*args\b/.test(source)) return { ok: false, reason: 'the file takes no judge from args (no `args.judgeClient`)', snippet };
  const judge = "args.judgeClient ?? new HeuristicStudioClient('judge')";
  const model = /\bjudgeModel\b/.test(source) ? "args.judgeModel ?? 'default'" : "'default'";
  const after = source.slice(rubricAt).search(/^[ \t]*return new \w+\(/m);
  const returnAt = after < 0 ? -1 : rubricAt + after;
  if (returnAt < 0) return { ok: false, reason: 'the file has no `return new ...Env(` line to put the criteria before', snippet };
  const indent = /^[ \t]*/.exec(source.slice(returnAt))![0];
  const list = JSON.stringify(
    criteria.map(({ name, question, weight }) => ({ name, question, weight: weight ?? 1 })),
    null,
    2,
  ).replace(/\n/g, `\n${indent}`);
  const block =
    `${indent}// Criteria proposed by the judge from the audit and reviewed by you; each is logged as its own metric (criterion_<name>).\n` +
    `${indent}// They gate the reward: it becomes the rubric's own reward × the weighted fraction of criteria met, so a response\n` +
    `${indent}// that meets them all keeps its reward and one that breaks them loses it, however much the judge paid.\n` +
    `${indent}gateByCriteria(rubric, new CriteriaRubric({ judgeClient: ${judge}, judgeModel: ${model}, criteria: ${list} }));\n`;
  const withBlock = source.slice(0, returnAt) + block + source.slice(returnAt);
  const firstImport = withBlock.search(/^import /m);
  const importLine = "import { CriteriaRubric, gateByCriteria, HeuristicStudioClient } from 'tabrl/studio';\n";
  const edited = firstImport < 0 ? importLine + withBlock : withBlock.slice(0, firstImport) + importLine + withBlock.slice(firstImport);
  return { ok: true, source: edited };
}
