// Measures src/ui's import graph: its rooms (a top-level file or folder of src/ui, and each
// features/<name>/ folder), the imports that run upward (into a folder above the importer's), and the
// largest knot (strongly connected set of rooms). Relative imports only, `import type` included
// unless --runtime; --slices-in-store counts each *-slice.ts with the store it is composed into
// (as the lint rule tabrl/ui-rooms does).
//   node scripts/ui-import-graph.mjs [--runtime] [--slices-in-store] [--verbose] [path/to/src/ui]
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const flags = new Set(process.argv.slice(2).filter((arg) => arg.startsWith('--')));
const root = resolve(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 'src/ui');
const files = [];
const walk = (folder) => {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
  }
};
walk(root);

const roomOf = (file) => {
  const parts = relative(root, file).split('/');
  if (flags.has('--slices-in-store') && /-slice\.ts$/.test(file)) return 'store';
  return parts[0] === 'features' && parts.length >= 3 ? `features/${parts[1]}` : parts[0];
};
const typeOnly = (statement) => /^(?:import|export)\s+type\b/.test(statement) || /^import\s*\{([^}]*)\}/.test(statement) && statement.match(/^import\s*\{([^}]*)\}/)[1].split(',').filter((name) => name.trim()).every((name) => name.trim().startsWith('type '));

const edges = new Map();
const upward = [];
for (const file of files) {
  for (const match of readFileSync(file, 'utf8').matchAll(/(?:import|export)[^'"]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g)) {
    if (flags.has('--runtime') && typeOnly(match[0])) continue;
    const target = resolve(dirname(file), (match[1] ?? match[2]).replace(/\?.*$/, ''));
    if (!target.startsWith(`${root}/`)) continue;
    if (dirname(file) !== dirname(target) && dirname(file).startsWith(`${dirname(target)}/`)) upward.push(`${relative(root, file)} -> ${relative(root, target)}`);
    const [from, to] = [roomOf(file), roomOf(target)];
    if (from === to) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from).add(to);
  }
}

// Tarjan's strongly connected components over the rooms.
const rooms = [...new Set(files.map(roomOf))];
const index = new Map(), low = new Map(), onStack = new Set(), stack = [], knots = [];
const connect = (room) => {
  index.set(room, index.size);
  low.set(room, index.get(room));
  stack.push(room);
  onStack.add(room);
  for (const next of edges.get(room) ?? []) {
    if (!index.has(next)) {
      connect(next);
      low.set(room, Math.min(low.get(room), low.get(next)));
    } else if (onStack.has(next)) low.set(room, Math.min(low.get(room), index.get(next)));
  }
  if (low.get(room) !== index.get(room)) return;
  const knot = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    knot.push(member);
  } while (member !== room);
  knots.push(knot);
};
for (const room of rooms) if (!index.has(room)) connect(room);
knots.sort((a, b) => b.length - a.length);

console.log(`${files.length} files, ${rooms.length} rooms, ${upward.length} upward imports, largest knot ${knots[0]?.length ?? 0} rooms`);
if (flags.has('--verbose')) {
  for (const line of upward) console.log(`  upward: ${line}`);
  console.log(`  largest knot: ${[...(knots[0] ?? [])].sort().join(' ')}`);
}
console.log(JSON.stringify({ bench: 'ui-import-graph', files: files.length, rooms: rooms.length, upward: upward.length, knot: knots[0]?.length ?? 0, flags: [...flags] }));
