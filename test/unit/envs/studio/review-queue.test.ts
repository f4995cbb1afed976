// The review queue: its order over every source, and taking a rejected task out of a studio environment file.
import { describe, expect, test } from 'vitest';
import { buildReviewQueue, decideReviewItems, mergeCriteria, HeuristicAttackerClient, HeuristicStudioClient, parseReviewQueue, qaEnvironmentFile, redTeam, removeTasksFromEnvironmentFile, reviewQueueJsonl, type AuditResult, type AuditRollout, type TaskCalibration } from '../../../../src/envs/studio/index.ts';
import loadGullibleJudge from '../../../../src/ui/features/lessons/sources/gullible-judge.ts';

const rollout = (id: string, reward: number): AuditRollout => ({ id, taskIndex: Number(id.split(':')[0]), rolloutIndex: 0, question: `question ${id}`, completion: `reply ${id}`, reward, scores: { judgeReward: reward } });
const ROLLOUTS = [rollout('0:0', 0.9), rollout('1:0', 1), rollout('2:0', 0.95), rollout('3:0', 0.85), rollout('4:0', 0.5)];
const AUDIT: AuditResult = {
  rollouts: 5,
  detectorsRun: ['collapse', 'metric-disagrees'],
  detectorsSkipped: [],
  findings: [],
  reviews: [
    { id: '0:0', sample: 'top', reward: 0.9, earned: false, reason: 'it ignores the word' },
    { id: '1:0', sample: 'top', reward: 1, earned: false, reason: 'one line' },
    { id: '4:0', sample: 'random', reward: 0.5, earned: true, reason: 'fine' },
  ],
  flagged: [
    { id: '1:0', reward: 1, reasons: ['judge: not earned — one line'] },
    { id: '2:0', reward: 0.95, reasons: ['collapse: 3 different tasks got the same completion'] },
    { id: '0:0', reward: 0.9, reasons: ['metric-disagrees: high reward while twoLinesMetric was 0', 'judge: not earned — it ignores the word'] },
    { id: '3:0', reward: 0.85, reasons: ['metric-disagrees: high reward while twoLinesMetric was 0'] },
  ],
  unrewarded: 0,
};
const calibrated = (taskIndex: number, passRate: number, label: TaskCalibration['label']): TaskCalibration => ({ taskIndex, question: `task ${taskIndex}`, rollouts: 20, passRate, rewardMean: passRate, rewardStd: 0, learnability: 4 * passRate * (1 - passRate), label, errors: 0 });

describe('the review queue', () => {
  test('ranks back doors, then what the judge says was not earned, split judges, judge against metric, other flags, edge-of-band tasks', async () => {
    const report = await redTeam(loadGullibleJudge({ numEvalTasks: 1 }), { attacker: new HeuristicAttackerClient(), reviewer: new HeuristicStudioClient('judge') });
    expect(report.backDoors.length).toBeGreaterThan(1);
    const queue = buildReviewQueue({
      audit: { result: AUDIT, rollouts: ROLLOUTS },
      redTeam: report,
      splitRollouts: [
        { id: '7:0', question: 'q7', response: 'r7', reward: 1, agreement: 2 / 3 },
        { id: '8:0', question: 'q8', response: 'r8', reward: 0, agreement: 1 / 3 },
      ],
      calibration: { keep: [0.1, 0.9], tasks: [calibrated(0, 0.5, 'learnable'), calibrated(1, 0.15, 'learnable'), calibrated(2, 0.82, 'learnable'), calibrated(3, 0.05, 'too-hard'), calibrated(4, 0.95, 'too-easy'), calibrated(5, 0.1, 'learnable')] },
    });
    const doors = report.backDoors.length;
    expect(queue.slice(0, doors).map((item) => item.kind)).toEqual(Array(doors).fill('back-door'));
    expect(queue.slice(0, doors).map((item) => item.reward)).toEqual([...report.backDoors.map((finding) => finding.reward)].sort((a, b) => b - a));
    expect(queue.slice(doors).map((item) => item.id)).toEqual([
      'not-earned:1:0', 'not-earned:0:0', // reward 1, then 0.9
      'judges-split:8:0', 'judges-split:7:0', // agreement 1/3, then 2/3
      'metric-disagrees:3:0', // 0:0 is already in the queue as not earned
      'audit-flag:2:0',
      'edge-of-band:5', 'edge-of-band:1', 'edge-of-band:2', // 0 from the edge, 0.05, 0.08; 0.5 is mid-band, 0.05 and 0.95 are outside it
    ]);
    expect(queue.map((item) => item.rank)).toEqual(queue.map((_, i) => i + 1));
    expect(queue.find((item) => item.kind === 'edge-of-band')!.subject).toBe('task');
    expect(parseReviewQueue(reviewQueueJsonl(queue))).toEqual(queue);
    expect(() => parseReviewQueue('{"id": "x"}\n')).toThrow('review.jsonl:1: not a review item');
  });

  test('a rejected task leaves a studio environment file; a file without TASKS is refused', () => {
    const source = qaEnvironmentFile([{ question: 'When was it founded?', answer: '1962' }, { question: 'Who founded it?', answer: 'Halvorsen' }], { name: 'station' });
    const { source: edited, removed } = removeTasksFromEnvironmentFile(source, ['Who founded it?']);
    expect(removed).toBe(1);
    expect(edited).toContain('When was it founded?');
    expect(edited).not.toContain('Who founded it?');
    expect(edited.replace(/export const TASKS: Task\[\] = [\s\S]*?\n\];/, '')).toBe(source.replace(/export const TASKS: Task\[\] = [\s\S]*?\n\];/, ''));
    expect(() => removeTasksFromEnvironmentFile('export default () => null;', ['x'])).toThrow('the file has no `export const TASKS');
  });

  test('a decision marks only the chosen items (by id or rank), and an unknown id changes nothing', () => {
    const items = buildReviewQueue({ calibration: { tasks: [0.15, 0.5, 0.85].map((passRate, taskIndex) => ({ taskIndex, question: `q${taskIndex}`, passRate, rollouts: 20, label: 'learnable' }) as TaskCalibration), keep: [0.1, 0.9] } });
    expect(items.map((item) => item.id)).toEqual(['edge-of-band:0', 'edge-of-band:2']);
    const { items: decided, chosen } = decideReviewItems(items, ['2'], 'rejected');
    expect(chosen.map((item) => item.id)).toEqual(['edge-of-band:2']);
    expect(decided.map((item) => item.status)).toEqual(['open', 'rejected']);
    expect(items.map((item) => item.status)).toEqual(['open', 'open']);
    expect(() => decideReviewItems(items, ['edge-of-band:0', 'nope'], 'accepted')).toThrow('no item "nope" in the review queue');
  });

  test('merged criteria keep the ones already there and add only new names', () => {
    const kept = [{ name: 'uses_required_word', question: 'Does it use the word?' }];
    const merged = mergeCriteria(kept, [{ name: 'uses_required_word', question: 'another wording' }, { name: 'line_count', question: 'Two lines?' }]);
    expect(merged).toEqual([kept[0], { name: 'line_count', question: 'Two lines?' }]);
  });

  test('simulated tools below 80% fidelity in the last round join the queue, lowest first, before edge-of-band tasks', () => {
    const row = (tool: string, fields: number, judged: number | null, calls = 4) => ({ tool, calls, exact: fields / 2, fields, judged, garbage: 0 });
    const items = buildReviewQueue({
      fidelity: {
        rounds: [
          { round: 1, rows: [row('search', 0.1, null), row('weather', 0.1, null)] },
          // The last round counts: weather got better; search is judged (0.5) although its fields agree 0.9; '*' is the overall row.
          { round: 2, rows: [row('search', 0.9, 0.5), row('weather', 0.85, null), row('lookup', 0.6, null), row('empty', 0, null, 0), row('*', 0.7, null)] },
        ],
      },
      calibration: { tasks: [{ taskIndex: 0, question: 'q0', passRate: 0.15, rollouts: 20, label: 'learnable' } as TaskCalibration], keep: [0.1, 0.9] },
    });
    expect(items.map((item) => [item.id, item.subject])).toEqual([
      ['low-fidelity:search', 'tool'],
      ['low-fidelity:lookup', 'tool'],
      ['edge-of-band:0', 'task'],
    ]);
    expect(items[0]!.why).toBe('50% judged equivalent on 4 held-out calls (exact 45%) after round 2, below 80%');
    expect(items[1]!.why).toContain('60% fields agreeing');
    expect(parseReviewQueue(reviewQueueJsonl(items))).toEqual(items);
  });
});
