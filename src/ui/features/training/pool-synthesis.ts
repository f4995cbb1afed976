/**
 * Task synthesis during the tab's GRPO training: its settings (the generator's role, the keep band,
 * the refresh interval, attempts per task and the pool's rules, with `tabrl train`'s defaults), the
 * pool a job keeps (its tasks, the retired ones waiting for replay, the refreshes so far and their
 * records), and one refresh of that pool with the core's `refreshTaskPool` (src/envs/studio). A
 * refresh works on copies and hands back a new pool, so a refresh that fails (no documents, a dead
 * generator, replies that are not tasks) leaves the job's pool as it was and says why.
 * This module holds no store and opens no sandbox: pool-synthesis-job.ts wires it to the tab.
 */
import type { ChatClient, RolloutRecord, Task } from '../../../envs/index.ts';
import { checkPoolRules, DEFAULT_POOL_RULES, poolRefreshRecord, refreshTaskPool, type PoolRefreshRecord, type PoolRules, type StudioDocument } from '../../../envs/studio/index.ts';
import { errorMessage } from '../../../common/error-message.ts';

/** Who writes new tasks (and checks them against their passage): the offline heuristic rules, or the Judge card's model (an endpoint, WebLLM or the in-tab model), as the Studio lends its roles. */
export type PoolGeneratorSource = 'heuristic' | 'judge';

/** The person's choice of synthesis during a GRPO job: the policy being trained solves the tasks; the generator's source also checks each candidate against its passage (synthesis's open-book check). */
export interface PoolSynthesisSettings {
  generator: PoolGeneratorSource;
  /** New tasks join when the policy passes them this often; pooled tasks passed at the top or more often (mastered) may retire. */
  keep: [number, number];
  /** Refresh after every `every` GRPO steps. */
  every: number;
  /** Attempts of the policy per task at each refresh. */
  k: number;
  rules: PoolRules;
}

/** `tabrl train --synth-docs`'s defaults: band 0.2–0.8, every 10 steps, 4 attempts, and the CLI's pool rules. */
export const DEFAULT_POOL_SYNTHESIS: PoolSynthesisSettings = { generator: 'heuristic', keep: [0.2, 0.8], every: 10, k: 4, rules: DEFAULT_POOL_RULES };

/** One refresh as the run keeps it: the core's record, at the run's GRPO step (`runStep`, the job's offset added). */
export type TabPoolRefresh = PoolRefreshRecord & { runStep: number };

/** The pool a GRPO job with synthesis keeps (in its run record, so Stop and Train go on from it). */
export interface TabTaskPool {
  /** The training tasks now: the environment's at first, then as refreshes left them. */
  tasks: Task[];
  /** Retired tasks waiting for replay, oldest first. */
  retired: Task[];
  /** Refreshes run so far (the next one takes the next document). */
  refreshes: number;
  /** The last refresh's failure, in words; cleared by the next refresh that works. */
  error?: string;
}

/** A GRPO job's synthesis as the run keeps it: the settings it started with and its pool now. */
export interface JobSynthesis {
  settings: PoolSynthesisSettings;
  pool: TabTaskPool;
}

/** The settings checked, with a message that names the field and what it takes. */
export function checkPoolSynthesis(settings: PoolSynthesisSettings): PoolSynthesisSettings {
  const [lo, hi] = settings.keep;
  if (!(lo >= 0 && hi <= 1 && lo < hi)) throw new Error(`The keep band must be two pass rates with 0 ≤ lo < hi ≤ 1, got ${lo}–${hi}.`);
  if (!Number.isSafeInteger(settings.every) || settings.every < 1) throw new Error(`"Refresh every" must be a whole number of steps ≥ 1, got ${settings.every}.`);
  if (!Number.isSafeInteger(settings.k) || settings.k < 1) throw new Error(`The attempts per task must be a whole number ≥ 1, got ${settings.k}.`);
  checkPoolRules(settings.rules);
  return settings;
}

/** Whether the job's step `step` (0-based, within the job) is followed by a refresh. */
export function refreshDue(step: number, settings: Pick<PoolSynthesisSettings, 'every'>): boolean {
  return (step + 1) % settings.every === 0;
}

/** What one refresh uses: the documents, the generator and its verifier (the open-book check of synthesis, from the same source), the policy being trained, and how the policy solves tasks in the sandbox. */
export interface TabRefreshParts {
  documents: readonly StudioDocument[];
  generator: { client: ChatClient; model: string; label: string };
  verifier: { client: ChatClient; model: string };
  policy: { client: ChatClient; model: string };
  /** `k` rollout records per task of `tasks`, with the list index as `taskIndex` (the sandbox's evaluation of those tasks). */
  measure: (tasks: readonly Task[], k: number) => Promise<RolloutRecord[]>;
  signal?: AbortSignal;
}

/** A refresh's outcome: the pool to keep and the record to add, or the unchanged pool with the failure in words. */
type TabRefreshOutcome = { ok: true; pool: TabTaskPool; record: TabPoolRefresh } | { ok: false; pool: TabTaskPool; error: string };

/**
 * Refreshes `pool` after the job's step `step` (the run's step `runStep`) with the core's refresh, on
 * copies: the new pool and its record when it worked; otherwise `pool` as it was, with `error` set to
 * what happened and what to do. `policyVersion` is the weights version measured, when known.
 */
export async function refreshTabPool(pool: TabTaskPool, settings: PoolSynthesisSettings, parts: TabRefreshParts, step: number, runStep: number, policyVersion?: number): Promise<TabRefreshOutcome> {
  const failed = (error: string): TabRefreshOutcome => ({ ok: false, pool: { ...pool, error }, error });
  if (parts.documents.length === 0) return failed(`The pool refresh after step ${runStep} had no documents: add some in the Studio tab (Documents); training went on with the pool as it was.`);
  const working = { dataset: [...pool.tasks] };
  const retired = [...pool.retired];
  let metrics;
  try {
    metrics = await refreshTaskPool(
      working,
      {
        documents: parts.documents,
        generator: parts.generator.client,
        generatorModel: parts.generator.model,
        solver: parts.verifier.client,
        solverModel: parts.verifier.model,
        policy: parts.policy.client,
        policyModel: parts.policy.model,
        k: settings.k,
        keep: settings.keep,
        rules: settings.rules,
        measure: parts.measure,
        ...(parts.signal ? { signal: parts.signal } : {}),
      },
      pool.refreshes,
      step,
      retired,
    );
  } catch (error) {
    return failed(`The pool refresh after step ${runStep} failed: ${errorMessage(error)}. Training went on with the pool as it was.`);
  }
  const { synthesis } = metrics;
  const keptAsWas = 'Training went on with the pool as it was.';
  if (synthesis.stoppedEarly)
    return failed(`The pool refresh after step ${runStep} stopped: ${synthesis.stoppedEarly}. Check the generator (${parts.generator.label}), or choose the offline heuristic generator. ${keptAsWas}`);
  if (synthesis.generated > 0 && synthesis.malformed === synthesis.generated)
    return failed(
      `The pool refresh after step ${runStep}: the generator wrote nothing that is a task (question and answer; ${synthesis.malformed} malformed); ${parts.generator.label} may not follow the synthesis prompt. ${keptAsWas}`,
    );
  if (synthesis.generated > 0 && synthesis.errors === synthesis.generated)
    return failed(
      `The pool refresh after step ${runStep}: every candidate was lost to a failed call (${synthesis.firstError ?? 'no reason given'}); check the generator (${parts.generator.label}). ${keptAsWas}`,
    );
  const { error: _cleared, ...rest } = pool;
  return { ok: true, pool: { ...rest, tasks: working.dataset, retired, refreshes: pool.refreshes + 1 }, record: { ...poolRefreshRecord(metrics, policyVersion), runStep } };
}
