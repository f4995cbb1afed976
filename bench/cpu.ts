/**
 * `npm run bench:cpu`: one training step (zeroGrad, forward + backward, clip, AdamW) at batch 12 ×
 * 128 tokens of nano's shape (vocab 264, hidden 96, 3 layers, mlp 256) and of a ~4.5M shape (hidden
 * 256, 6 layers, mlp 768), through the fast CPU backend, the reference CPU backend and PyTorch on
 * the CPU (bench/cpu_torch_peer.py on Debian's python3-torch with libopenblas0-pthread, installed
 * with apt-get when missing), from the same weights and batch (the first step's losses must agree
 * within 1e-4), at 1 thread and at all cores, interleaved in one run. Then matmul GFLOP/s at the
 * models' shapes, ours against torch. The PyTorch process runs without OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE (this machine sets them for old OpenBLAS builds; they slow it down). Beside wall
 * time, each step's CPU time (the process's, every thread's) is taken on both sides: at one thread
 * its ratio holds on a machine that other jobs load, where the wall times' ratio drifts (the side
 * that waits longer for a core loses). Prints tables and one JSON line {"bench":"cpu","rows":[...],"matmul":[...]}.
 *
 *   npm run bench:cpu -- [--reps 5] [--models nano,4.5m] [--reference-reps 1]
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createFastCpuBackend } from '../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels } from '../src/gpu/fast-cpu/node-kernel-threads.ts';
import type { WasmKernels } from '../src/gpu/fast-cpu/wasm-kernels.ts';
import type { ModelBackend, NamedTensors, OptimizerStepOptions } from '../src/gpu/model/backend.ts';
import type { ModelConfig } from '../src/gpu/model/config.ts';
import { createCpuBackend } from '../src/gpu/model/cpu-backend.ts';
import { seededUniform } from '../src/gpu/model/init.ts';

const { values } = parseArgs({ options: { reps: { type: 'string', default: '5' }, models: { type: 'string', default: 'nano,4.5m' }, 'reference-reps': { type: 'string', default: '1' } } });
const REPS = Number(values.reps);
const REFERENCE_REPS = Number(values['reference-reps']);
const B = 12;
const T = 128;
const LOSS_TOLERANCE = 1e-4;
const OPTIMIZER: OptimizerStepOptions = { lr: 1e-3, beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1, maxGradNorm: 1 };
const PYTHON = '/usr/bin/python3';

const LLAMA = { architecture: 'LlamaForCausalLM', rope_theta: 10000, rms_norm_eps: 1e-5, tie_word_embeddings: true, attention_bias: false, attention_output_bias: false, qk_norm: false } as const;
const MODELS: Record<string, ModelConfig> = {
  nano: { ...LLAMA, vocab_size: 264, hidden_size: 96, intermediate_size: 256, num_hidden_layers: 3, num_attention_heads: 3, num_key_value_heads: 1, head_dim: 32 },
  '4.5m': { ...LLAMA, vocab_size: 264, hidden_size: 256, intermediate_size: 768, num_hidden_layers: 6, num_attention_heads: 8, num_key_value_heads: 2, head_dim: 32 },
};
const modelNames = values.models.split(',');
for (const name of modelNames) if (!(name in MODELS)) throw new Error(`--models takes ${Object.keys(MODELS).join(', ')} (comma-separated), got ${name}`);
const THREADS = [...new Set([1, availableParallelism()])];

/** Installs Debian's python3-torch and libopenblas0-pthread when /usr/bin/python3 cannot import torch. */
function ensureTorch(): void {
  if (spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0) return;
  if (process.getuid?.() !== 0) throw new Error(`${PYTHON} cannot import torch; install it with: sudo apt-get install -y python3-torch libopenblas0-pthread`);
  console.log('installing python3-torch and libopenblas0-pthread with apt-get ...');
  const install = spawnSync('apt-get', ['install', '-y', '-qq', 'python3-torch', 'libopenblas0-pthread'], { stdio: 'inherit' });
  if (install.status !== 0) throw new Error('apt-get install python3-torch libopenblas0-pthread failed (see above); run apt-get update first if the package lists are missing');
}

/** The PyTorch peer process: one JSON answer per command line. */
function startPeer(): { ask: (command: string) => Promise<Record<string, number>>; close: () => void } {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE; // for old OpenBLAS builds; they cost a current one about 1.5×
  delete env.OPENBLAS_L2_SIZE;
  const child = spawn(PYTHON, [new URL('cpu_torch_peer.py', import.meta.url).pathname], { env, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    async ask(command) {
      child.stdin.write(`${command}\n`);
      const { value, done } = await lines.next();
      if (done) throw new Error(`the PyTorch peer exited during "${command}"`);
      const answer = JSON.parse(value as string) as Record<string, number> & { error?: string };
      if (answer.error !== undefined) throw new Error(`PyTorch peer: ${answer.error}`);
      return answer;
    },
    close: () => child.stdin.end(),
  };
}

/** Writes the weights (in one flat file) and the batch for the peer; returns the folder. */
function writePeerInput(folder: string, config: ModelConfig, tensors: NamedTensors, ids: Int32Array, targets: Int32Array): void {
  let offset = 0;
  const params = [...tensors].map(([name, tensor]) => {
    const slot = { name, shape: tensor.shape, offset, size: tensor.data.length };
    offset += tensor.data.length;
    return slot;
  });
  const flat = new Float32Array(offset);
  params.forEach((slot) => flat.set(tensors.get(slot.name)!.data, slot.offset));
  writeFileSync(join(folder, 'weights.bin'), flat);
  writeFileSync(join(folder, 'model.json'), JSON.stringify({ config, params, ids: [...ids], targets: [...targets], B, T, optimizer: OPTIMIZER }));
}

/** The process's CPU time so far in ms (every thread's: the kernel workers run in this process). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** One training step, its wall and CPU time; weights of −1/N make backward's sum, the loss, the mean cross-entropy. */
async function trainStep(backend: ModelBackend, ids: Int32Array, targets: Int32Array, weights: Float32Array): Promise<{ ms: number; cpuMs: number; loss: number }> {
  const start = performance.now();
  const cpuStart = cpuMs();
  await backend.zeroGrad();
  const objective = await backend.backward(ids, targets, weights, B, T, 1);
  await backend.step(OPTIMIZER);
  return { ms: performance.now() - start, cpuMs: cpuMs() - cpuStart, loss: objective };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

ensureTorch();
const peer = startPeer();
const kernelsByThreads = new Map<number, WasmKernels>();
for (const threads of THREADS) kernelsByThreads.set(threads, await createNodeWasmKernels(threads));
const folder = mkdtempSync(join(tmpdir(), 'tabrl-bench-cpu-'));
const rows: Array<{
  model: string;
  threads: number;
  oursMs: number;
  torchMs: number;
  oursOverTorch: number;
  oursCpuMs: number;
  torchCpuMs: number;
  cpuOursOverTorch: number;
  referenceMs: number | null;
  lossDiff: number;
}> = [];
const matmulRows: Array<{ model: string; shape: string; threads: number; oursGflops: number; torchGflops: number }> = [];
console.log(`bench:cpu on ${cpus()[0]?.model ?? 'cpu'} (${availableParallelism()} cores), Node ${process.version}; load average at start ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);

try {
  for (const name of modelNames) {
    const config = MODELS[name]!;
    const N = B * T;
    const uniform = seededUniform(7);
    const ids = Int32Array.from({ length: N }, () => Math.floor(uniform() * config.vocab_size));
    const targets = Int32Array.from({ length: N }, () => Math.floor(uniform() * config.vocab_size));
    const weights = new Float32Array(N).fill(-1 / N);
    const tensors = await (await createCpuBackend(config, { seed: 1 })).getParameters();
    const modelFolder = join(folder, name);
    spawnSync('mkdir', ['-p', modelFolder]);
    writePeerInput(modelFolder, config, tensors, ids, targets);

    const ours = new Map<number, ModelBackend>();
    for (const threads of THREADS) {
      ours.set(threads, await createFastCpuBackend(config, { tensors }, {}, kernelsByThreads.get(threads)!));
      await peer.ask(`load ${name}-${threads} ${modelFolder}`);
    }
    const reference = REFERENCE_REPS > 0 ? await createCpuBackend(config, { tensors }) : null;
    const times = new Map<number, { ours: number[]; torch: number[]; oursCpu: number[]; torchCpu: number[]; lossDiff: number }>();
    const referenceTimes: number[] = [];
    // rep 0 is the warm-up, from identical weights: its losses are the equality check
    for (let rep = 0; rep <= REPS; rep++) {
      for (const threads of THREADS) {
        const mine = await trainStep(ours.get(threads)!, ids, targets, weights);
        const theirs = await peer.ask(`step ${name}-${threads} ${threads}`);
        const entry = times.get(threads) ?? { ours: [], torch: [], oursCpu: [], torchCpu: [], lossDiff: Math.abs(mine.loss - theirs.loss!) };
        if (rep > 0) {
          entry.ours.push(mine.ms);
          entry.torch.push(theirs.ms!);
          entry.oursCpu.push(mine.cpuMs);
          entry.torchCpu.push(theirs.cpuMs!);
        }
        times.set(threads, entry);
        if (rep === 0) console.log(`${name}, ${threads} thread(s): first-step loss ours ${mine.loss.toFixed(6)}, torch ${theirs.loss!.toFixed(6)}`);
      }
      if (reference !== null && rep < REFERENCE_REPS) referenceTimes.push((await trainStep(reference, ids, targets, weights)).ms);
    }
    for (const threads of THREADS) {
      const { ours: oursMs, torch: torchMs, oursCpu, torchCpu, lossDiff } = times.get(threads)!;
      const row = {
        model: name,
        threads,
        oursMs: median(oursMs),
        torchMs: median(torchMs),
        oursOverTorch: median(oursMs) / median(torchMs),
        oursCpuMs: median(oursCpu),
        torchCpuMs: median(torchCpu),
        cpuOursOverTorch: median(oursCpu) / median(torchCpu),
        referenceMs: threads === 1 && referenceTimes.length > 0 ? median(referenceTimes) : null,
        lossDiff,
      };
      rows.push(row);
    }

    // matmul GFLOP/s at the model's forward shapes: (N, IC) · (OC, IC)ᵀ
    const { hidden_size: C, intermediate_size: I, num_attention_heads: NH, head_dim: HS, vocab_size: V } = config;
    for (const [label, IC, OC] of [['q_proj', C, NH * HS], ['gate_proj', C, I], ['down_proj', I, C], ['lm_head', C, V]] as const) {
      const a = Float32Array.from({ length: N * IC }, () => uniform() * 2 - 1);
      const w = Float32Array.from({ length: OC * IC }, () => uniform() * 2 - 1);
      const out = new Float32Array(N * OC);
      for (const threads of THREADS) {
        const kernels = kernelsByThreads.get(threads)!;
        const samples: number[] = [];
        const torchSamples: number[] = [];
        // interleaved: one product of ours, then one of torch's (after a warm-up product of its own)
        for (let rep = 0; rep <= 9; rep++) {
          const start = performance.now();
          kernels.gemm(out, a, IC, 1, w, 1, IC, null, N, OC, IC, false);
          if (rep > 0) samples.push(performance.now() - start);
          if (rep > 0) torchSamples.push((await peer.ask(`matmul ${N} ${IC} ${OC} ${threads} 1`)).ms!);
        }
        const flops = 2 * N * IC * OC;
        matmulRows.push({ model: name, shape: `${label} ${N}×${IC}·${OC}×${IC}ᵀ`, threads, oursGflops: flops / median(samples) / 1e6, torchGflops: flops / median(torchSamples) / 1e6 });
      }
    }
  }
} finally {
  peer.close();
  for (const kernels of kernelsByThreads.values()) kernels.dispose();
  rmSync(folder, { recursive: true, force: true });
}

console.log('\ntraining step, batch 12 × 128 (median of', REPS, 'interleaved steps after one warm-up; PyTorch without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE)');
console.log('| model | threads | fast CPU ms | PyTorch ms | ours / torch | fast CPU, CPU ms | PyTorch, CPU ms | ours / torch in CPU time | reference CPU ms | first-step |Δloss| |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const reference = row.referenceMs === null ? '' : row.referenceMs.toFixed(0);
  const loss = `${row.lossDiff.toExponential(1)}${row.lossDiff <= LOSS_TOLERANCE ? '' : ' ✗'}`;
  console.log(
    `| ${row.model} | ${row.threads} | ${row.oursMs.toFixed(0)} | ${row.torchMs.toFixed(0)} | ${row.oursOverTorch.toFixed(2)} | ${row.oursCpuMs.toFixed(0)} | ${row.torchCpuMs.toFixed(0)} | ${row.cpuOursOverTorch.toFixed(2)} | ${reference} | ${loss} |`,
  );
}
console.log("(CPU time counts every thread of the process: at 2 threads, both threads' time)");
console.log('\nmatmul, median of 9 interleaved products (GFLOP/s)');
console.log('| model | shape | threads | ours | PyTorch | ours / torch time |');
console.log('|---|---|---|---|---|---|');
for (const row of matmulRows) console.log(`| ${row.model} | ${row.shape} | ${row.threads} | ${row.oursGflops.toFixed(1)} | ${row.torchGflops.toFixed(1)} | ${(row.torchGflops / row.oursGflops).toFixed(2)} |`);
console.log(`load average at end ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
const round = (x: number, digits: number): number => Number(x.toFixed(digits));
console.log(
  JSON.stringify({
    bench: 'cpu',
    rows: rows.map((r) => ({
      ...r,
      oursMs: round(r.oursMs, 1),
      torchMs: round(r.torchMs, 1),
      oursOverTorch: round(r.oursOverTorch, 2),
      oursCpuMs: round(r.oursCpuMs, 1),
      torchCpuMs: round(r.torchCpuMs, 1),
      cpuOursOverTorch: round(r.cpuOursOverTorch, 2),
      referenceMs: r.referenceMs === null ? null : round(r.referenceMs, 0),
    })),
    matmul: matmulRows.map((r) => ({ ...r, oursGflops: round(r.oursGflops, 1), torchGflops: round(r.torchGflops, 1) })),
  }),
);
if (rows.some((row) => row.lossDiff > LOSS_TOLERANCE)) {
  console.error(`first-step losses differ by more than ${LOSS_TOLERANCE}: the peer does not compute the same model`);
  process.exitCode = 1;
}
