/**
 * `npm run bench:serve`: what serving an environment over OpenEnv's protocol costs. Starts the real
 * `tabrl serve` (its own process, 127.0.0.1) for a built-in (reverse-text) and for an environment
 * file (a two-step ToolEnv, run in its isolated process), and plays the same episodes with 1, 8 and
 * 64 concurrent WebSocket sessions under a scripted policy, as a trainer's clients would. Reports
 * episodes/s, p50/p99 latency of a request (reset or step: send to reply, seen by the client), the
 * server process's resident memory per open session (mid-episode, each holding a parked rollout;
 * an environment file's own process is not counted), and the same episodes run by `evaluate()` in
 * this one process with the same policy and concurrency as the peer: the server's overhead is the
 * ratio of the two wall times, one run each. Prints a table and one JSON line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { closeEnvironment, loadEnvironmentSpec } from '../src/cli/load-environment.ts';
import { evaluate, ScriptedClient, type Message, type ScriptedReply, type Task } from '../src/envs/index.ts';
import { reverseText } from '../src/envs/builtin/reverse-text.ts';

const { values } = parseArgs({ options: { sessions: { type: 'string', default: '1,8,64' }, episodes: { type: 'string', default: '1024' } } });
const levels = values.sessions.split(',').map(Number);
const totalEpisodes = Number(values.episodes);
const TABRL_BIN = fileURLToPath(new URL('../bin/tabrl.mjs', import.meta.url));

const ADDER_ENV = `
import { ToolEnv, Rubric, defineTool, type ToolState } from 'tabrl';

const add = defineTool<{ a: number; b: number }>({
  name: 'add',
  description: 'Adds two numbers.',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  run: ({ a, b }) => String(a + b),
});

export default function loadEnvironment() {
  return new ToolEnv({
    name: 'adder',
    dataset: Array.from({ length: 50 }, (_, i) => ({ question: \`What is \${i} + \${2 * i + 1}?\`, answer: String(3 * i + 1) })),
    tools: [add],
    maxTurns: 4,
    rubric: new Rubric<ToolState>({ rewards: [
      { name: 'correct', fn: ({ completion, answer }) => (completion.at(-1)?.content.trim() === answer ? 1 : 0) },
      { name: 'usedTool', weight: 0.5, fn: ({ state }) => (state.toolCalls > 0 ? 1 : 0) },
    ] }),
  });
}
`;

/** reverse-text: reverse the text in the last user message, in the tags the rubric reads. */
function reversePolicy(messages: Message[]): ScriptedReply {
  const text = messages.at(-1)!.content.replace(/^Reverse this text: /, '');
  return `<reversed>${reverseText(text)}</reversed>`;
}

/** The adder file: call add with the question's numbers, then answer with the tool's result. */
function adderPolicy(messages: Message[]): ScriptedReply {
  const last = messages.at(-1)!;
  if (last.role === 'tool') return last.content;
  const [a, b] = (last.content.match(/\d+/g) ?? ['0', '0']).map(Number);
  return { tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: JSON.stringify({ a, b }) } }] };
}

/** A reply as a step's data. */
function actionOf(reply: ScriptedReply): unknown {
  return typeof reply === 'string' ? { message: reply } : { message: reply.content ?? '', tool_calls: reply.tool_calls };
}

interface Served {
  child: ChildProcess;
  wsUrl: string;
}

function startServer(spec: string): Promise<Served> {
  const child = spawn(process.execPath, [TABRL_BIN, 'serve', spec, '--port', '0', '--max-sessions', String(Math.max(...levels))], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /\((ws:\/\/[^ ]+\/ws)\)/.exec(out);
      if (match) resolve({ child, wsUrl: match[1]! });
    });
    child.on('exit', (code) => reject(new Error(`tabrl serve exited with ${code}: ${out}`)));
  });
}

function residentBytes(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

/** One WebSocket session: request → reply, timing each. */
async function openSession(url: string, latencies: number[]) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  let waiting: ((reply: { type: string; data: Record<string, unknown> }) => void) | undefined;
  ws.on('message', (data) => waiting?.(JSON.parse(String(data))));
  return {
    request(request: unknown): Promise<{ type: string; data: Record<string, unknown> }> {
      const sent = performance.now();
      return new Promise((resolve) => {
        waiting = (reply) => {
          latencies.push(performance.now() - sent);
          if (reply.type === 'error') throw new Error(`the server answered with an error: ${JSON.stringify(reply.data)}`);
          resolve(reply);
        };
        ws.send(JSON.stringify(request));
      });
    },
    close: () => new Promise((resolve) => {
      ws.once('close', resolve);
      ws.close();
    }),
  };
}

interface Row {
  environment: string;
  sessions: number;
  episodes: number;
  served_s: number;
  episodes_per_s: number;
  p50_ms: number;
  p99_ms: number;
  rss_per_session_kib: number;
  in_process_s: number;
  overhead: number;
  /** Wall time the server adds per episode: (served − in-process) / episodes. */
  added_ms_per_episode: number;
  reward_served: number;
  reward_in_process: number;
}

const rows: Row[] = [];
const dir = mkdtempSync(join(tmpdir(), 'tabrl-bench-serve-'));
writeFileSync(join(dir, 'adder.ts'), ADDER_ENV);
for (const [spec, name, policy] of [['reverse-text', 'reverse-text', reversePolicy], [join(dir, 'adder.ts'), 'adder (file, ToolEnv)', adderPolicy]] as const) {
  const server = await startServer(spec);
  const env = await loadEnvironmentSpec(spec);
  const numTasks = Math.min(env.dataset.length, 50);
  for (const sessions of levels) {
    const perSession = Math.ceil(totalEpisodes / sessions);
    const episodes = perSession * sessions;
    const latencies: number[] = [];
    // Memory: resident bytes before the sessions connect, and once each has reset (holding its parked rollout); that first episode is a warm-up, not timed.
    const idleBytes = residentBytes(server.child.pid!);
    const clients = await Promise.all(Array.from({ length: sessions }, () => openSession(server.wsUrl, latencies)));
    let rewardSum = 0;
    const play = async (client: Awaited<ReturnType<typeof openSession>>, taskIndex: number, first?: { type: string; data: Record<string, unknown> }) => {
      let reply = first ?? (await client.request({ type: 'reset', data: { task_index: taskIndex } }));
      while (!reply.data.done) reply = await client.request({ type: 'step', data: actionOf(policy((reply.data.observation as { messages: Message[] }).messages)) });
      return reply.data.reward as number;
    };
    const opened = await Promise.all(clients.map((client, s) => client.request({ type: 'reset', data: { task_index: s % numTasks } })));
    const heldBytes = residentBytes(server.child.pid!);
    await Promise.all(clients.map((client, s) => play(client, s % numTasks, opened[s])));
    latencies.length = 0;

    const started = performance.now();
    await Promise.all(clients.map(async (client, s) => {
      for (let e = 0; e < perSession; e++) {
        const reward = await play(client, (s * perSession + e) % numTasks);
        rewardSum += reward;
      }
    }));
    const servedSeconds = (performance.now() - started) / 1000;
    await Promise.all(clients.map((client) => client.close()));

    // The peer: the same episodes by evaluate() in this process, same policy and concurrency.
    const tasks: Task[] = Array.from({ length: episodes }, (_, i) => env.dataset[(Math.floor(i / perSession) * perSession + (i % perSession)) % numTasks]!);
    const peerStarted = performance.now();
    const peer = await evaluate(env, new ScriptedClient((messages) => policy(messages)), { tasks, concurrency: sessions });
    const inProcessSeconds = (performance.now() - peerStarted) / 1000;

    latencies.sort((a, b) => a - b);
    rows.push({
      environment: name,
      sessions,
      episodes,
      served_s: servedSeconds,
      episodes_per_s: episodes / servedSeconds,
      p50_ms: latencies[Math.floor(latencies.length * 0.5)]!,
      p99_ms: latencies[Math.floor(latencies.length * 0.99)]!,
      rss_per_session_kib: Math.max(0, heldBytes - idleBytes) / sessions / 1024,
      in_process_s: inProcessSeconds,
      overhead: servedSeconds / inProcessSeconds,
      added_ms_per_episode: ((servedSeconds - inProcessSeconds) * 1000) / episodes,
      reward_served: rewardSum / episodes,
      reward_in_process: peer.summary.reward.mean,
    });
  }
  closeEnvironment(env);
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
}

const load = loadavg().map((value) => value.toFixed(2)).join(' ');
console.log(`\nbench:serve — tabrl serve in its own process on 127.0.0.1, scripted policy, Node ${process.version}, load average ${load} at the end\n`);
console.log('| environment | sessions | episodes | served s | episodes/s | p50 ms | p99 ms | server RSS per session | evaluate() in-process s | overhead | added ms per episode | mean reward served / in-process |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  console.log(`| ${row.environment} | ${row.sessions} | ${row.episodes} | ${row.served_s.toFixed(2)} | ${row.episodes_per_s.toFixed(0)} | ${row.p50_ms.toFixed(2)} | ${row.p99_ms.toFixed(2)} | ${row.rss_per_session_kib.toFixed(0)} KiB | ${row.in_process_s.toFixed(2)} | ${row.overhead.toFixed(2)}× | ${row.added_ms_per_episode.toFixed(2)} | ${row.reward_served.toFixed(3)} / ${row.reward_in_process.toFixed(3)} |`);
}
const round = (value: number) => Number(value.toFixed(3));
console.log(JSON.stringify({ bench: 'serve', node: process.version, loadavg: loadavg().map(round), rows: rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'number' ? round(value) : value]))) }));
