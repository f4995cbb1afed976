#!/usr/bin/env node
// Prepares a CPU Vulkan driver with shader-f16 for the f16-weight tests (test/gpu-node/f16-weights.test.ts):
// Mesa 25's lavapipe from Debian bookworm-backports, downloaded with `apt-get download` through a
// private apt config and state (the system's apt sources are not touched) and extracted, not installed,
// into node_modules/.cache/tabrl-lavapipe, with an ICD json that VK_ICD_FILENAMES can point at.
// Debian 12's own Mesa 22 is too old for Dawn. Runtime libraries lavapipe links that the system lacks
// (e.g. libllvm15 on a bare machine) are installed from the system's own sources, as root only.
// Prints the ICD path; exits 1 with the reason when it cannot. Plain JS so it runs before anything is compiled.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LAVAPIPE_CACHE = join(ROOT, 'node_modules', '.cache', 'tabrl-lavapipe');
const LAVAPIPE_ICD = join(LAVAPIPE_CACHE, 'lvp_icd.json');
const LIBRARY = join(LAVAPIPE_CACHE, 'libvulkan_lvp.so');
const SUITE = 'bookworm-backports';

/**
 * The sources line for bookworm-backports on the mirror this machine's own apt sources use for
 * bookworm (deb822 .sources files or one-line .list files), so the script goes where apt already goes.
 */
function backportsSourceLine() {
  const files = ['/etc/apt/sources.list', ...(existsSync('/etc/apt/sources.list.d') ? readdirSync('/etc/apt/sources.list.d').map((name) => join('/etc/apt/sources.list.d', name)) : [])];
  for (const file of files.filter((path) => /\.(list|sources)$/.test(path) && existsSync(path))) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.sources')) {
      for (const stanza of text.split(/\n\s*\n/)) {
        const field = (name) => stanza.match(new RegExp(`^${name}:\\s*(.+)$`, 'mi'))?.[1]?.trim();
        const uri = field('URIs')?.split(/\s+/)[0];
        const suites = field('Suites')?.split(/\s+/) ?? [];
        if (uri && suites.includes('bookworm')) {
          const signedBy = field('Signed-By') ?? '/usr/share/keyrings/debian-archive-keyring.gpg';
          return `deb [signed-by=${signedBy}] ${uri} ${SUITE} main\n`;
        }
      }
    } else {
      for (const line of text.split('\n')) {
        const match = line.match(/^deb\s+(\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/);
        if (match) return `deb ${match[1] ?? ''}${match[2]} ${SUITE} main\n`;
      }
    }
  }
  fail("this machine's apt sources have no Debian bookworm entry to take the mirror from");
}

function fail(reason) {
  console.error(`tabrl: cannot prepare lavapipe (Mesa 25, shader-f16) for the f16 tests: ${reason}`);
  process.exit(1);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${(result.stderr || result.stdout || '').trim().split('\n').slice(-3).join(' | ')}`);
  return result.stdout;
}

/** Returns the packages of a Depends field that dpkg does not have installed. */
function missingPackages(depends) {
  const names = depends.split(',').map((part) => part.trim().split(/[\s(|:]/)[0]).filter(Boolean);
  return names.filter((name) => {
    const status = spawnSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8' });
    return status.status !== 0 || !status.stdout.includes('install ok installed');
  });
}

function prepare() {
  if (process.platform !== 'linux' || process.arch !== 'x64') fail(`needs Debian on x86-64, this is ${process.platform}/${process.arch}`);
  for (const tool of ['apt-get', 'dpkg-deb', 'dpkg-query']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) fail(`${tool} is missing (a Debian machine is needed)`);
  }
  rmSync(LAVAPIPE_CACHE, { recursive: true, force: true });
  const apt = join(LAVAPIPE_CACHE, 'apt');
  const debs = join(LAVAPIPE_CACHE, 'debs');
  for (const dir of [join(apt, 'state', 'lists', 'partial'), join(apt, 'cache', 'archives', 'partial'), debs]) mkdirSync(dir, { recursive: true });
  writeFileSync(join(apt, 'sources.list'), backportsSourceLine());
  const aptOptions = [
    '-o', `Dir::Etc::sourcelist=${join(apt, 'sources.list')}`,
    '-o', 'Dir::Etc::sourceparts=/nonexistent',
    '-o', `Dir::State=${join(apt, 'state')}`,
    '-o', `Dir::Cache=${join(apt, 'cache')}`,
    '-o', 'Debug::NoLocking=1',
    '-o', 'APT::Sandbox::User=root',
  ];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    run('apt-get', [...aptOptions, 'update'], { env });
  } catch (error) {
    fail(`${SUITE} is not reachable (${error.message})`);
  }
  run('apt-get', [...aptOptions, 'download', `mesa-vulkan-drivers/${SUITE}`], { cwd: debs, env });
  const deb = readdirSync(debs).find((file) => file.startsWith('mesa-vulkan-drivers_'));
  if (!deb) fail('apt-get download mesa-vulkan-drivers left no .deb');
  const missing = missingPackages(run('dpkg-deb', ['-f', join(debs, deb), 'Depends']));
  if (missing.length > 0) {
    const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!isRoot) fail(`lavapipe needs ${missing.join(' ')}: run sudo apt-get install -y ${missing.join(' ')}`);
    console.error(`tabrl: installing ${missing.join(' ')} (libraries lavapipe links) from the system's apt sources...`);
    const install = () => execFileSync('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { stdio: 'inherit', env });
    try {
      install();
    } catch {
      execFileSync('apt-get', ['update'], { stdio: 'inherit', env });
      install();
    }
  }
  const extracted = join(LAVAPIPE_CACHE, 'root');
  run('dpkg-deb', ['-x', join(debs, deb), extracted]);
  const library = join(extracted, 'usr', 'lib', 'x86_64-linux-gnu', 'libvulkan_lvp.so');
  if (!existsSync(library)) fail(`${deb} has no libvulkan_lvp.so`);
  renameSync(library, LIBRARY); // keep lavapipe only (about 20 MB), not the other drivers
  for (const dir of [extracted, debs, apt]) rmSync(dir, { recursive: true, force: true });
  const icd = { file_format_version: '1.0.1', ICD: { library_path: LIBRARY, api_version: '1.3.0' } };
  writeFileSync(LAVAPIPE_ICD, `${JSON.stringify(icd, null, 2)}\n`);
  console.error(`tabrl: lavapipe from ${deb} ready at ${LAVAPIPE_ICD}`);
}

if (!(existsSync(LAVAPIPE_ICD) && existsSync(LIBRARY))) {
  try {
    prepare();
  } catch (error) {
    fail(error.message);
  }
}
console.log(LAVAPIPE_ICD);
