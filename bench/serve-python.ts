/**
 * `npx tsx bench/serve-python.ts [--sessions 1,8,64] [--episodes 1024]`: what the Python client
 * (python/tabrl_openenv, the one TRL's environment class uses) gets from `tabrl serve`. Starts the
 * real server (its own process, 127.0.0.1) for reverse-text, then plays correct one-step episodes
 * from python3: the blocking client in one session (at most 256 episodes), and the asyncio client
 * with 1, 8 and 64 sessions at once, each opening its sessions inside the timed run. Reports
 * episodes/s and p50/p99 latency of a request (reset or step, send to reply, seen from Python).
 * bench/serve.ts measures the server itself with a Node client; this is the same path seen from
 * the trainer's language. Prints a table and one JSON line.
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServeProcess } from '../test/support/serve-wire.ts';

const { values } = parseArgs({ options: { sessions: { type: 'string', default: '1,8,64' }, episodes: { type: 'string', default: '1024' } } });
const PYTHON_DIR = fileURLToPath(new URL('../python', import.meta.url));

/** One level as drive_serve.py reports it. */
interface Level {
  client: string;
  sessions: number;
  episodes: number;
  wall_s: number;
  episodes_per_s: number;
  p50_ms: number;
  p99_ms: number;
  mean_reward: number;
}

const server = await startServeProcess(['reverse-text', '--port', '0', '--max-sessions', '128']);
const url = server.url;

const stdout = await new Promise<string>((resolve, reject) => {
  execFile('python3', ['-E', '-s', 'tests/drive_serve.py', 'bench', url, '--sessions', values.sessions, '--episodes', values.episodes], { cwd: PYTHON_DIR, maxBuffer: 1 << 20 }, (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)));
});
await server.stop();
const levels = stdout.trim().split('\n').map((line) => JSON.parse(line) as Level);

const python = await new Promise<string>((resolve) => execFile('python3', ['--version'], (_error, out) => resolve(out.trim())));
const load = loadavg().map((value) => value.toFixed(2)).join(' ');
console.log(`\nbench:serve-python — tabrl serve reverse-text on 127.0.0.1, correct one-step episodes from ${python}, load average ${load} at the end\n`);
console.log('| client | sessions | episodes | wall s | episodes/s | p50 ms | p99 ms | mean reward |');
console.log('|---|---|---|---|---|---|---|---|');
for (const level of levels) {
  console.log(`| ${level.client} | ${level.sessions} | ${level.episodes} | ${level.wall_s.toFixed(2)} | ${level.episodes_per_s.toFixed(0)} | ${level.p50_ms.toFixed(2)} | ${level.p99_ms.toFixed(2)} | ${level.mean_reward.toFixed(3)} |`);
}
const round = (value: number) => Math.round(value * 1000) / 1000;
console.log(JSON.stringify({ bench: 'serve-python', python, loadavg: loadavg().map(round), rows: levels.map((level) => Object.fromEntries(Object.entries(level).map(([key, value]) => [key, typeof value === 'number' ? round(value) : value]))) }));
