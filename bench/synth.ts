/**
 * `npm run bench:synth`: throughput of grounded task synthesis (src/envs/studio/synthesize.ts) in
 * candidates per minute, against the project's fake OpenAI server over real HTTP on 127.0.0.1,
 * whose models play generator, solver and judge by rule (the library's offline heuristic clients)
 * after a fixed per-request delay standing in for model latency (--latency-ms, default 50).
 * Runs the same documents at concurrency 1 and 8 (and any --concurrency list), with exact-match
 * verification and with the judge, k = 3. Measures the studio's scheduling and HTTP overhead, not a
 * model: with a real endpoint the model's own time dominates. Prints a table and one JSON line.
 */
import { parseArgs } from 'node:util';
import { OpenAIHttpClient } from '../src/envs/index.ts';
import { HeuristicStudioClient, synthesizeTasks, type StudioDocument } from '../src/envs/studio/index.ts';
import { startFakeOpenAIServer } from '../test/support/fake-openai-server.ts';

const { values } = parseArgs({ options: { 'latency-ms': { type: 'string', default: '50' }, concurrency: { type: 'string', default: '1,8' }, paragraphs: { type: 'string', default: '24' } } });
const latencyMs = Number(values['latency-ms']);
const levels = values.concurrency.split(',').map(Number);
const paragraphs = Number(values.paragraphs);

const ROLES = { generator: new HeuristicStudioClient('generator'), solver: new HeuristicStudioClient('solver'), judge: new HeuristicStudioClient('judge') };
const server = await startFakeOpenAIServer(async (_messages, request) => {
  await new Promise((resolve) => setTimeout(resolve, latencyMs));
  const role = ROLES[request.model as keyof typeof ROLES];
  return (await role.chat.completions.create(request)).choices[0]!.message.content;
});

/** Markdown documents of `paragraphs` short sections, each with a number, a name and long words to ask about. */
function makeDocuments(): StudioDocument[] {
  const names = ['Holt', 'Okafor', 'Lindqvist', 'Tanaka', 'Moreau', 'Alvarez'];
  const sections = Array.from({ length: paragraphs }, (_, i) => `## Station ${i}\n\nThe station number ${i} was founded in ${1900 + i * 3} by Captain ${names[i % names.length]}. Its generator burns diesel through the ${i % 2 ? 'polar' : 'coastal'} winter and powers ${10 + i} laboratories.`);
  return [{ name: 'stations.md', text: sections.join('\n\n') }];
}

const client = new OpenAIHttpClient({ baseURL: server.baseURL, maxRetries: 0 });
const rows: { concurrency: number; judge: boolean; candidates: number; kept: number; calls: number; seconds: number; candidatesPerMinute: number }[] = [];
for (const judge of [false, true]) {
  for (const concurrency of levels) {
    const started = performance.now();
    const { report } = await synthesizeTasks({ documents: makeDocuments(), generator: client, solver: client, ...(judge ? { judge: client, judgeModel: 'judge' } : {}), generatorModel: 'generator', solverModel: 'solver', k: 3, concurrency });
    const seconds = (performance.now() - started) / 1000;
    rows.push({ concurrency, judge, candidates: report.candidates, kept: report.kept, calls: report.calls.generator + report.calls.solver + report.calls.judge, seconds, candidatesPerMinute: (report.candidates / seconds) * 60 });
  }
}
await server.close();

console.log(`\nbench:synth — fake OpenAI server on 127.0.0.1, ${latencyMs} ms per request, ${paragraphs} chunks, k = 3, Node ${process.version}\n`);
console.log('| concurrency | answers compared by | candidates | kept | model calls | seconds | candidates/min | speed-up vs concurrency 1 |');
console.log('|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const base = rows.find((other) => other.judge === row.judge && other.concurrency === 1);
  console.log(`| ${row.concurrency} | ${row.judge ? 'judge' : 'exact match'} | ${row.candidates} | ${row.kept} | ${row.calls} | ${row.seconds.toFixed(2)} | ${row.candidatesPerMinute.toFixed(0)} | ${base ? `${(row.candidatesPerMinute / base.candidatesPerMinute).toFixed(2)}×` : '–'} |`);
}
console.log(JSON.stringify({ bench: 'synth', latencyMs, chunks: paragraphs, k: 3, node: process.version, rows: rows.map((row) => ({ ...row, seconds: Number(row.seconds.toFixed(3)), candidatesPerMinute: Math.round(row.candidatesPerMinute) })) }));
