/**
 * Criteria a person kept, written into the open environment: a copy of the file opens with them as
 * a criteria judge gating its reward (criteria-source.ts), or, when the file cannot be edited by
 * rule, the note says why and gives the code to paste. Shared by the red team and the review queue.
 */
import type { Criterion } from '../../../envs/studio/index.ts';
import { currentEnvironment } from '../environment/current-environment.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { addEnvironment } from '../environment/environment-actions.ts';
import { addCriteriaToSource } from './criteria-source.ts';

/** What adding criteria did: the new file's name, or why not and the code to paste. */
export interface CriteriaOutcome {
  opened: boolean;
  note: string;
  snippet: string | null;
}

/** Opens "<name> + criteria": the open environment with `criteria` gating its reward. */
export async function openEnvironmentWithCriteria(criteria: readonly Criterion[]): Promise<CriteriaOutcome> {
  const saved = currentEnvironment();
  if (!saved) return { opened: false, note: 'Open an environment first: the criteria gate its reward.', snippet: null };
  const source = environmentModel(saved.id, saved.source).getValue();
  const edit = addCriteriaToSource(source, criteria);
  if (!edit.ok) return { opened: false, note: `Could not add the criteria to "${saved.name}" automatically: ${edit.reason}. Paste this into its loadEnvironment:`, snippet: edit.snippet };
  const name = saved.name.endsWith(' + criteria') ? saved.name : `${saved.name} + criteria`;
  await addEnvironment({ name, source: edit.source, ...(saved.builtin ? { builtin: saved.builtin } : {}) });
  return {
    opened: true,
    note: `Opened "${name}" with ${criteria.length} criteria (${criteria.map((criterion) => criterion.name).join(', ')}) judged by the Judge card's judge; they gate the reward, so a reply that breaks them no longer passes.`,
    snippet: null,
  };
}
