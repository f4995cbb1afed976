/**
 * `tabrl forward` (src/cli/forward.ts) on a tiny model folder written to a temp dir: the printed
 * logits equal the reference CPU backend's with `--backend cpu-reference`, and the fast CPU
 * backend's with `--backend cpu` (as for the other commands), and bad input gets one clear message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runForward } from '../../../src/cli/forward.ts';
import { serializeModelFolder } from '../../../src/gpu/io/model-folder.ts';
import { createFastCpuBackend } from '../../../src/gpu/fast-cpu/fast-cpu-backend.ts';
import { createNodeWasmKernels, defaultThreadCount } from '../../../src/gpu/fast-cpu/node-kernel-threads.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { expectClose } from '../../support/expect-close.ts';

const CONFIG: ModelConfig = {
  architecture: 'LlamaForCausalLM',
  vocab_size: 17,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 2,
  head_dim: 4,
  rope_theta: 10000,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: false,
  attention_bias: false,
  attention_output_bias: false,
  qk_norm: false,
};
const dir = mkdtempSync(join(tmpdir(), 'tabrl-forward-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs runForward and returns its exit code and everything it printed to stdout. */
async function run(argv: string[]): Promise<{ code: number; stdout: string }> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    return { code: await runForward(argv), stdout: lines.join('\n') };
  } finally {
    spy.mockRestore();
  }
}

describe('tabrl forward', () => {
  it('prints one row of logits per token: cpu-reference equal to the reference backend, cpu (the default) to the fast one', async () => {
    const backend = await createCpuBackend(CONFIG, { seed: 3 });
    for (const [name, bytes] of serializeModelFolder(CONFIG, await backend.getParameters())) writeFileSync(join(dir, name), bytes);
    const ids = Int32Array.from([1, 2, 16]);
    const logitsOf = async (argv: string[]): Promise<number[]> => {
      const { code, stdout } = await run(argv);
      expect(code).toBe(0);
      const { logits } = JSON.parse(stdout) as { logits: number[][] };
      expect(logits).toHaveLength(3);
      expect(logits.every((row) => row.length === CONFIG.vocab_size)).toBe(true);
      return logits.flat();
    };
    const referenceLogits = await backend.forward(ids, 1, 3);
    expectClose(await logitsOf([dir, '--tokens', '1,2,16', '--backend', 'cpu-reference']), referenceLogits, { atol: 0, rtol: 0, label: 'cpu-reference logits' });
    // The kernels the CLI's --backend cpu makes (the relaxed-SIMD build, V8's flag turned on, every core), so the bits can match.
    const kernels = await createNodeWasmKernels(defaultThreadCount());
    const fast = await createFastCpuBackend(CONFIG, { tensors: await backend.getParameters() }, {}, kernels);
    const fastLogits = await fast.forward(ids, 1, 3);
    // The fast backend sums in f32, the reference in f64: not the same bits, which tells the two apart.
    expect(Array.from(fastLogits)).not.toEqual(Array.from(referenceLogits));
    for (const argv of [[dir, '--tokens', '1,2,16', '--backend', 'cpu'], [dir, '--tokens', '1,2,16']]) {
      expectClose(await logitsOf(argv), fastLogits, { atol: 0, rtol: 0, label: `logits of ${argv.slice(3).join(' ') || 'the default backend'}` });
    }
    expectClose(fastLogits, referenceLogits, { atol: 1e-5, rtol: 1e-4, label: 'fast against reference' });
    kernels.dispose();
  });

  it('explains bad arguments and folders', async () => {
    await expect(run([dir])).rejects.toThrow(/--tokens is required/);
    await expect(run([dir, '--tokens', '1,x'])).rejects.toThrow(/comma-separated non-negative integers/);
    await expect(run([dir, '--tokens', '1,17'])).rejects.toThrow(/token 17 is outside the vocabulary .* \(vocab_size 17\)/);
    await expect(run([dir, '--tokens', '1', '--backend', 'metal'])).rejects.toThrow(/--backend must be cpu, cpu-reference or webgpu, got "metal"/);
    await expect(run([join(dir, 'missing'), '--tokens', '1'])).rejects.toThrow(/missing: cannot read config\.json/);
    expect((await run(['--help'])).stdout).toMatch(/Usage: tabrl forward/);
  });

  it('takes nano by name, as generate does, and says why tiny has no folder to run', async () => {
    // Both used to fail reading "nano/config.json" and "tiny/config.json" relative to the shell's folder.
    const nano = await run(['nano', '--tokens', '1,2']);
    expect(nano.code).toBe(0);
    expect((JSON.parse(nano.stdout) as { logits: number[][] }).logits.map((row) => row.length)).toEqual([264, 264]);
    await expect(run(['tiny', '--tokens', '1'])).rejects.toThrow(/"tiny" has none .*tabrl generate tiny/);
  });
});
