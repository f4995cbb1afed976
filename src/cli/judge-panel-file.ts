/**
 * `--judges FILE` for `tabrl eval`: a panel of judge endpoints, lent to the environment as one judge
 * (`JudgePanelClient`). The file is JSON:
 *
 *   { "aggregation": "majority", "judges": [
 *       { "name": "qwen-7b", "baseUrl": "http://localhost:8000/v1", "model": "Qwen/Qwen2.5-7B-Instruct" },
 *       { "baseUrl": "http://localhost:8001/v1", "model": "llama-8b", "apiKeyEnv": "JUDGE_B_KEY" } ] }
 *
 * (or a bare list of judges, aggregated by their mean). Keys are read from the named environment
 * variables, never from the file. This module reads and checks the file, builds the client, and
 * shapes what metadata.json records under `judge_panel`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RolloutRecord } from '../envs/index.ts';
import { formatPanelReport, JudgePanelClient, PANEL_AGGREGATIONS, splitRollouts, type PanelAggregation, type PanelReport } from '../envs/studio/index.ts';
import { completionText } from '../envs/messages.ts';
import { CliError } from './cli-error.ts';
import { createEndpointClient } from './model-roles.ts';
import type { JudgeSettings } from './judge.ts';
import { errorMessage } from '../common/error-message.ts';

/** A panel as metadata.json records it (without keys, only the variables that hold them). */
export interface JudgePanelSettings {
  aggregation: PanelAggregation;
  judges: (JudgeSettings & { name: string })[];
}

/** Reads and checks a `--judges` file; every mistake is a usage error naming the file and the field. */
export function readJudgePanelFile(path: string): JudgePanelSettings {
  if (!existsSync(path)) throw new CliError(`--judges ${path}: no such file; give a JSON file with {"aggregation": "mean|majority|unanimous", "judges": [{"baseUrl", "model"}, …]}`, 2);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new CliError(`--judges ${path}: not JSON (${errorMessage(error)})`, 2);
  }
  return checkJudgePanel(value, `--judges ${path}`);
}

/** Checks a panel read from a file or from metadata.json (`label` starts each message). */
export function checkJudgePanel(value: unknown, label: string): JudgePanelSettings {
  const record = Array.isArray(value) ? { judges: value } : (value as Record<string, unknown> | null);
  if (typeof record !== 'object' || record === null) throw new CliError(`${label}: expected {"aggregation", "judges": [...]} or a list of judges`, 2);
  const aggregation = record.aggregation ?? 'mean';
  if (!PANEL_AGGREGATIONS.includes(aggregation as PanelAggregation))
    throw new CliError(`${label}: "aggregation" must be one of ${PANEL_AGGREGATIONS.join(', ')}, got ${JSON.stringify(aggregation)}`, 2);
  if (!Array.isArray(record.judges) || record.judges.length < 2) throw new CliError(`${label}: "judges" must list two or more judges (for one judge, use --judge-base-url and --judge-model)`, 2);
  const names = new Set<string>();
  const judges = record.judges.map((item: unknown, i) => {
    const judge = item as Record<string, unknown> | null;
    if (typeof judge !== 'object' || judge === null || typeof judge.baseUrl !== 'string' || typeof judge.model !== 'string')
      throw new CliError(`${label}: judges[${i}] needs "baseUrl" and "model" strings`, 2);
    if (judge.apiKeyEnv !== undefined && typeof judge.apiKeyEnv !== 'string') throw new CliError(`${label}: judges[${i}].apiKeyEnv must be the name of an environment variable`, 2);
    if ('apiKey' in judge) throw new CliError(`${label}: judges[${i}] holds an "apiKey"; put the key in an environment variable and name it in "apiKeyEnv"`, 2);
    const name = typeof judge.name === 'string' && judge.name.trim() !== '' ? judge.name.trim() : `judge-${i + 1}`;
    if (names.has(name)) throw new CliError(`${label}: two judges are named "${name}"`, 2);
    names.add(name);
    return { name, baseUrl: judge.baseUrl, model: judge.model, ...(typeof judge.apiKeyEnv === 'string' ? { apiKeyEnv: judge.apiKeyEnv } : {}) };
  });
  return { aggregation: aggregation as PanelAggregation, judges };
}

/** The panel's client, each judge an endpoint whose key is read from its variable now. */
export function createJudgePanelClient(settings: JudgePanelSettings, timeoutMs: number): JudgePanelClient {
  return new JudgePanelClient(
    settings.judges.map((judge) => ({ name: judge.name, model: judge.model, client: createEndpointClient('judge', judge, { timeoutMs }) })),
    settings.aggregation,
  );
}

/** What metadata.json records under `judge_panel` after a run: the judges, the aggregation, the agreement and the split rollouts. */
export function judgePanelMetadata(settings: JudgePanelSettings, report: PanelReport, splitIds: readonly string[]): Record<string, unknown> {
  return {
    judges: settings.judges,
    aggregation: settings.aggregation,
    calls: report.calls,
    calls_without_score: report.unscored,
    replies_off_scale: report.offScaleReplies,
    agreement: { pairwise: report.agreement.pairwise, fleiss_kappa: report.agreement.fleissKappa, over_calls: report.agreement.items, split_calls: report.splitCalls.length },
    split_rollouts: splitIds,
  };
}

/** Ids (`task:rollout`) of the records whose panel call split. */
export function splitRecordIds(panel: JudgePanelClient, report: PanelReport, records: readonly RolloutRecord[]): string[] {
  const question = (record: RolloutRecord) => [...record.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
  return splitRollouts(
    panel.calls,
    report.splitCalls,
    records.map((record) => ({ id: `${record.taskIndex}:${record.rolloutIndex}`, question: question(record), response: completionText(record.completion) })),
  );
}

/** After `tabrl train --judges`: the panel's agreement over every reward call of the run, printed and written to DIR/judge-panel.json (training rollouts have no ids, so no split list). */
export function writeTrainingPanelReport(outDir: string, settings: JudgePanelSettings, panel: JudgePanelClient): void {
  const report = panel.report();
  const { split_rollouts: _split, ...metadata } = judgePanelMetadata(settings, report, []);
  writeFileSync(join(outDir, 'judge-panel.json'), `${JSON.stringify(metadata, null, 2)}\n`);
  console.error(formatPanelReport(report));
}
