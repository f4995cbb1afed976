/**
 * `npm run bench:serve [-- --sessions 1,8,64 --episodes 1024 --environments reverse-text,file,echo
 * --baseline-bin OTHER/bin/tabrl.mjs --repeat 1]`: what serving an environment over OpenEnv's protocol costs.
 * Starts the real `tabrl serve` (its own process, 127.0.0.1) for a built-in (reverse-text) and for
 * an environment file (a two-step ToolEnv, run in its isolated process), and plays the same episodes
 * with 1, 8 and 64 concurrent WebSocket sessions under a scripted policy, as a trainer's clients
 * would. The peer is `evaluate()` playing the same episodes in this one process with the same policy
 * and concurrency; the server's overhead is the ratio of the two wall times, one run each.
 *
 * What is measured, plainly: the clients run in this (the bench's) process, never in the server's,
 * as a trainer is another process; so a served episode's work is split over two processes that the
 * machine's cores may run at once, while `evaluate()` does the environment's and the policy's work
 * in one. The wall-time ratio is what a trainer waits; the CPU columns say who pays: the server's
 * CPU per episode (its process and its children: an environment file's process), the clients'
 * (this process while serving), and `evaluate()`'s (this process and its children while it runs).
 *
 * Per row: episodes/s, p50/p99 latency of a request (reset or step: send to reply, seen by the
 * client), the server's resident memory per open session (mid-episode, each holding a parked
 * rollout; an environment file's own process is not counted). The `echo` rows are the floor of the
 * transport: a bare `ws` echo server in its own process, answering each frame with itself, played
 * with the same frames, sessions and round trips as reverse-text (a reset and a step per episode).
 * `--baseline-bin` serves the same episodes with another checkout's `tabrl` too, at each level and
 * round beside this checkout's (the two take turns going first), so a before/after ratio comes from
 * one run; `--repeat N` plays each level N times in turn (each round: every server, then the peer), a
 * row per round, for a loaded machine whose runs scatter. Prints a table and one JSON line.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { closeEnvironment, loadEnvironmentSpec } from '../src/cli/load-environment.ts';
import { evaluate, ScriptedClient, type Message, type ScriptedReply, type Task } from '../src/envs/index.ts';
import { reverseText } from '../src/envs/builtin/reverse-text.ts';
import { adderEnvironmentSource, playEpisode, startServeProcess, WireClient, type Reply } from '../test/support/serve-wire.ts';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1,8,64' },
    episodes: { type: 'string', default: '1024' },
    environments: { type: 'string', default: 'reverse-text,file,echo' },
    'baseline-bin': { type: 'string' },
    repeat: { type: 'string', default: '1' },
  },
});
const levels = values.sessions.split(',').map(Number);
const totalEpisodes = Number(values.episodes);
const environments = new Set(values.environments.split(','));
const repeat = Number(values.repeat);
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const TABRL_BIN = fileURLToPath(new URL('../bin/tabrl.mjs', import.meta.url));
const BASELINE_BIN = values['baseline-bin'];
/** Clock ticks per second of /proc's CPU times. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** A bare WebSocket echo server (the `ws` package, as tabrl serve uses): each text frame comes back as it came. */
const ECHO_SERVER = `
import { WebSocketServer } from 'ws';
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/ws' });
wss.on('listening', () => console.log('echo: listening (ws://127.0.0.1:' + wss.address().port + '/ws)'));
wss.on('connection', (ws) => ws.on('message', (data) => ws.send(data, { binary: false })));
`;

const ADDER_ENV = adderEnvironmentSource(Array.from({ length: 50 }, (_, i) => ({ question: `What is ${i} + ${2 * i + 1}?`, answer: String(3 * i + 1) })));

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
  /** Which server: this checkout's, the baseline's, or the echo server. */
  label: string;
  child: ChildProcess;
  wsUrl: string;
  stop(): Promise<unknown>;
}

/** Starts `tabrl serve SPEC` with the given entry point, or with 'echo' the echo server, and resolves once it listens. */
async function startServer(label: string, bin: string, spec: string): Promise<Served> {
  if (bin !== 'echo') return { label, ...(await startServeProcess([spec, '--port', '0', '--max-sessions', String(Math.max(...levels))], { bin, timeoutMs: 300_000 })) };
  const child = spawn(process.execPath, ['--input-type=module', '-e', ECHO_SERVER], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /\((ws:\/\/[^ ]+\/ws)\)/.exec(out);
      if (match) resolve({ label, child, wsUrl: match[1]!, stop: () => (child.kill('SIGTERM'), exited) });
    });
    void exited.then((code) => reject(new Error(`the echo server exited with ${code}: ${out}`)));
  });
}

function residentBytes(pid: number): number {
  const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) * 1024;
}

/** CPU milliseconds (user + system) spent so far by process `pid` and every live process under it. */
function treeCpuMs(pid: number): number {
  const stats = new Map<number, { parent: number; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command's closing parenthesis: state (3), ppid (4), ..., utime (14), stime (15).
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      stats.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The process ended while we read.
    }
  }
  let ticks = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    ticks += stats.get(current)?.ticks ?? 0;
    for (const [child, stat] of stats) if (stat.parent === current) pending.push(child);
  }
  return (ticks * 1000) / CLOCK_TICKS;
}

/** CPU milliseconds (user + system) of this process so far. */
function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

interface Row {
  environment: string;
  /** this: the checkout's `tabrl serve`; baseline: --baseline-bin's; echo: the bare echo server. */
  server: string;
  /** Which of the --repeat rounds of its level. */
  round: number;
  sessions: number;
  episodes: number;
  served_s: number;
  episodes_per_s: number;
  p50_ms: number;
  p99_ms: number;
  rss_per_session_kib: number;
  /** CPU of the server's process tree (an environment file's process included) per episode. */
  server_cpu_ms_per_episode: number;
  /** CPU of the clients (this process) per episode while serving. */
  client_cpu_ms_per_episode: number;
  /** `evaluate()` in this process, same episodes; null for the echo rows. */
  in_process_s: number | null;
  in_process_cpu_ms_per_episode: number | null;
  /** served_s / in_process_s; for echo, over reverse-text's in-process time at the same level. */
  overhead: number | null;
  /** Wall time the server adds per episode: (served − in-process) / episodes. */
  added_ms_per_episode: number | null;
  reward_served: number | null;
  reward_in_process: number | null;
}

/** One level's served run: the sessions open, play a warm-up episode each, then `perSession` timed episodes each. */
async function serveLevel(server: Served, sessions: number, perSession: number, numTasks: number, policy: ((messages: Message[]) => ScriptedReply) | 'echo') {
  const latencies: number[] = [];
  // Memory: resident bytes before the sessions connect, and once each has reset (holding its parked rollout); that first episode is a warm-up, not timed.
  const idleBytes = residentBytes(server.child.pid!);
  const clients = await Promise.all(Array.from({ length: sessions }, () => WireClient.open(server.wsUrl, {}, latencies)));
  const play = async (client: WireClient, taskIndex: number, resetReply?: Reply): Promise<number> => {
    if (policy === 'echo') {
      // The same frames as a reverse-text episode (a reset, then a step with an answer of that size), each echoed back.
      if (!resetReply) await client.request({ type: 'reset', data: { task_index: taskIndex } });
      await client.request({ type: 'step', data: { message: `<reversed>${'x'.repeat(40)}</reversed>` } });
      return 0;
    }
    const last = (await playEpisode(client, { task_index: taskIndex }, (messages) => actionOf(policy(messages)), resetReply)).at(-1);
    if (last.type === 'error') throw new Error(`the server answered with an error: ${JSON.stringify(last.data)}`);
    return last.data.reward as number;
  };
  const opened = await Promise.all(clients.map((client, s) => client.request({ type: 'reset', data: { task_index: s % numTasks } })));
  const heldBytes = residentBytes(server.child.pid!);
  await Promise.all(clients.map((client, s) => play(client, s % numTasks, opened[s])));
  latencies.length = 0;

  let rewardSum = 0;
  const serverCpuBefore = treeCpuMs(server.child.pid!);
  const clientCpuBefore = ownCpuMs();
  const started = performance.now();
  await Promise.all(clients.map(async (client, s) => {
    for (let e = 0; e < perSession; e++) {
      const reward = await play(client, (s * perSession + e) % numTasks);
      rewardSum += reward;
    }
  }));
  const servedSeconds = (performance.now() - started) / 1000;
  const clientCpuMs = ownCpuMs() - clientCpuBefore;
  const serverCpuMs = treeCpuMs(server.child.pid!) - serverCpuBefore;
  await Promise.all(clients.map((client) => client.close()));
  latencies.sort((a, b) => a - b);
  const episodes = perSession * sessions;
  return {
    served_s: servedSeconds,
    episodes_per_s: episodes / servedSeconds,
    p50_ms: latencies[Math.floor(latencies.length * 0.5)]!,
    p99_ms: latencies[Math.floor(latencies.length * 0.99)]!,
    rss_per_session_kib: Math.max(0, heldBytes - idleBytes) / sessions / 1024,
    server_cpu_ms_per_episode: serverCpuMs / episodes,
    client_cpu_ms_per_episode: clientCpuMs / episodes,
    reward_served: policy === 'echo' ? null : rewardSum / episodes,
  };
}

const rows: Row[] = [];
const dir = mkdtempSync(join(tmpdir(), 'tabrl-bench-serve-'));
writeFileSync(join(dir, 'adder.ts'), ADDER_ENV);
/** reverse-text's in-process seconds by level, the echo rows' yardstick. */
const reverseTextInProcess = new Map<number, number>();
const plans = [
  ['reverse-text', 'reverse-text', 'reverse-text', reversePolicy],
  ['file', join(dir, 'adder.ts'), 'adder (file, ToolEnv)', adderPolicy],
  ['echo', 'reverse-text', 'echo (ws, no environment)', 'echo'],
] as const;
for (const [key, spec, name, policy] of plans) {
  if (!environments.has(key)) continue;
  const servers = policy === 'echo'
    ? [await startServer('echo', 'echo', spec)]
    : [...(BASELINE_BIN ? [await startServer('baseline', BASELINE_BIN, spec)] : []), await startServer('this', TABRL_BIN, spec)];
  const env = await loadEnvironmentSpec(spec);
  const numTasks = Math.min(env.dataset.length, 50);
  for (const sessions of levels) {
    const perSession = Math.ceil(totalEpisodes / sessions);
    const episodes = perSession * sessions;
    // Each round serves with every server and then runs the peer, so a round's rows are one comparison.
    for (let round = 1; round <= repeat; round++) {
      // The servers take turns going first: on a loaded machine the second of two back-to-back runs was
      // the slower in wall time whichever server it was (swapping them swapped the result).
      const served = [];
      for (const server of round % 2 === 1 ? servers : [...servers].reverse()) served.push({ server, result: await serveLevel(server, sessions, perSession, numTasks, policy) });
      served.sort((a, b) => servers.indexOf(a.server) - servers.indexOf(b.server));

      // The peer: the same episodes by evaluate() in this process, same policy and concurrency (none for the echo rows).
      let peer: { seconds: number; cpuMs: number; reward: number } | undefined;
      if (policy !== 'echo') {
        const tasks: Task[] = Array.from({ length: episodes }, (_, i) => env.dataset[(Math.floor(i / perSession) * perSession + (i % perSession)) % numTasks]!);
        const cpuOutsideServers = () => treeCpuMs(process.pid) - servers.reduce((sum, server) => sum + treeCpuMs(server.child.pid!), 0);
        const cpuBefore = cpuOutsideServers();
        const peerStarted = performance.now();
        const result = await evaluate(env, new ScriptedClient((messages) => policy(messages)), { tasks, concurrency: sessions });
        peer = { seconds: (performance.now() - peerStarted) / 1000, cpuMs: cpuOutsideServers() - cpuBefore, reward: result.summary.reward.mean };
        if (key === 'reverse-text') reverseTextInProcess.set(sessions, peer.seconds);
      }
      for (const { server, result } of served) {
        const yardstick = peer?.seconds ?? reverseTextInProcess.get(sessions);
        rows.push({
          environment: name,
          server: server.label,
          round,
          sessions,
          episodes,
          ...result,
          in_process_s: peer?.seconds ?? null,
          in_process_cpu_ms_per_episode: peer ? peer.cpuMs / episodes : null,
          overhead: yardstick === undefined ? null : result.served_s / yardstick,
          added_ms_per_episode: peer ? ((result.served_s - peer.seconds) * 1000) / episodes : null,
          reward_in_process: peer?.reward ?? null,
        });
      }
    }
  }
  closeEnvironment(env);
  for (const server of servers) await server.stop();
}

const load = loadavg().map((value) => value.toFixed(2)).join(' ');
const fixed = (value: number | null, digits: number, suffix = '') => (value === null ? '—' : `${value.toFixed(digits)}${suffix}`);
console.log(`\nbench:serve — tabrl serve in its own process on 127.0.0.1, the clients in this process, scripted policy, Node ${process.version}, load average ${load} at the end`);
console.log('(overhead = served wall ÷ evaluate() wall; for echo, ÷ reverse-text\'s evaluate() at the same sessions. CPU ms per episode: server = its process and children, clients = this process while serving)\n');
console.log('| environment | server | round | sessions | episodes | served s | episodes/s | p50 ms | p99 ms | server RSS per session | server CPU ms/episode | client CPU ms/episode | evaluate() s | evaluate() CPU ms/episode | overhead | added ms per episode | mean reward served / in-process |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  console.log(`| ${row.environment} | ${row.server} | ${row.round} | ${row.sessions} | ${row.episodes} | ${row.served_s.toFixed(2)} | ${row.episodes_per_s.toFixed(0)} | ${row.p50_ms.toFixed(2)} | ${row.p99_ms.toFixed(2)} | ${row.rss_per_session_kib.toFixed(0)} KiB | ${row.server_cpu_ms_per_episode.toFixed(3)} | ${row.client_cpu_ms_per_episode.toFixed(3)} | ${fixed(row.in_process_s, 2)} | ${fixed(row.in_process_cpu_ms_per_episode, 3)} | ${fixed(row.overhead, 2, '×')} | ${fixed(row.added_ms_per_episode, 2)} | ${fixed(row.reward_served, 3)} / ${fixed(row.reward_in_process, 3)} |`);
}
const round = (value: number) => Number(value.toFixed(3));
console.log(JSON.stringify({ bench: 'serve', node: process.version, loadavg: loadavg().map(round), rows: rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, typeof value === 'number' ? round(value) : value]))) }));
