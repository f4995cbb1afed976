/**
 * The CLI on WebGPU through Dawn (the software adapter in CI): `tabrl forward --backend webgpu`
 * prints the same logits as `--backend cpu` for a Qwen3-style model folder (q/k norm, untied head),
 * run through the real binary; `tabrl train --backend webgpu` warms up, trains and measures with
 * sampling on the GPU.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { serializeModelFolder } from '../../src/gpu/io/model-folder.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../src/gpu/model/cpu-backend.ts';
import { expectClose } from '../support/expect-close.ts';

const BIN = fileURLToPath(new URL('../../bin/tabrl.mjs', import.meta.url));
const CONFIG: ModelConfig = {
  architecture: 'Qwen3ForCausalLM', vocab_size: 40, hidden_size: 16, intermediate_size: 24, num_hidden_layers: 2,
  num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, rope_theta: 1_000_000, rms_norm_eps: 1e-6,
  tie_word_embeddings: false, attention_bias: false, attention_output_bias: false, qk_norm: true,
};

function forward(dir: string, backend: string): Promise<number[][]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [BIN, 'forward', dir, '--tokens', '3,1,4,1,5,9,2,6', '--backend', backend], { timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`tabrl forward --backend ${backend} failed: ${stderr}`));
      else resolve((JSON.parse(stdout) as { logits: number[][] }).logits);
    });
  });
}

test('tabrl forward --backend webgpu matches --backend cpu', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tabrl-forward-webgpu-'));
  const backend = await createCpuBackend(CONFIG, { seed: 12 });
  for (const [name, bytes] of serializeModelFolder(CONFIG, await backend.getParameters())) writeFileSync(join(dir, name), bytes);
  const [cpu, webgpu] = await Promise.all([forward(dir, 'cpu'), forward(dir, 'webgpu')]);
  expect(webgpu).toHaveLength(8);
  expectClose(Float32Array.from(webgpu.flat()), Float32Array.from(cpu.flat()), { atol: 1e-5, rtol: 1e-4, label: 'logits, webgpu vs cpu' });
});

test('tabrl train --backend webgpu samples on the GPU: a warm-up and a GRPO step on tiny finish and are measured (activations checkpointed, forced)', { timeout: 180_000 }, async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-train-webgpu-')), 'run');
  const args = ['train', 'reverse-text', '--model', 'tiny', '--backend', 'webgpu', '--activation-checkpointing', 'on', '--demonstrations', '16', '--sft-steps', '2', '--sft-batch', '4', '--steps', '1', '--tasks-per-step', '2', '--group', '4', '--max-tokens', '8', '--eval-tasks', '2', '--out', out];
  // Progress goes to stderr (stdout carries --json lines).
  const progress = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [BIN, ...args], { timeout: 170_000 }, (error, _stdout, stderr) => (error ? reject(new Error(`tabrl train --backend webgpu failed: ${stderr}`)) : resolve(stderr)));
  });
  expect(progress).toContain('software adapter) · sampling on the GPU (WebGPU decoder)');
  expect(progress).toMatch(/grpo 1\/1 {2}reward/);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { evaluations: { label: string }[] };
  expect(report.evaluations.map((evaluation) => evaluation.label)).toEqual(['before', 'after warm-up', 'after GRPO']);
});

test('tabrl train --activation-checkpointing takes auto, on or off, and only with --backend webgpu', async () => {
  const run = (extra: string[]) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(process.execPath, [BIN, 'train', 'reverse-text', '--model', 'tiny', ...extra, '--steps', '0', '--sft-steps', '0'], { timeout: 60_000 }, (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number((error as { code?: number }).code), stderr }),
      );
    });
  const wrong = await run(['--backend', 'webgpu', '--activation-checkpointing', 'yes']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('--activation-checkpointing takes auto, on or off, got "yes"');
  const cpu = await run(['--activation-checkpointing', 'on']);
  expect(cpu.code).toBe(2);
  expect(cpu.stderr).toContain('--activation-checkpointing is a setting of --backend webgpu');
});

test('tabrl train --memory-budget takes whole MiB and only with --backend webgpu; the micro-batch chosen is said, and a forced one past the budget stops the run', { timeout: 240_000 }, async () => {
  const run = (extra: string[]) =>
    new Promise<{ code: number; stderr: string }>((resolve) => {
      // no warm-up unless the run asks for one
      const warmup = extra.includes('--sft-steps') ? [] : ['--sft-steps', '0'];
      execFile(process.execPath, [BIN, 'train', 'reverse-text', '--model', 'tiny', ...warmup, '--eval-tasks', '0', ...extra], { timeout: 110_000 }, (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number((error as { code?: number }).code), stderr }),
      );
    });
  const wrong = await run(['--backend', 'webgpu', '--memory-budget', '1.5', '--steps', '0']);
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toContain('--memory-budget takes a whole number of MiB, e.g. 2048, got "1.5"');
  const cpu = await run(['--memory-budget', '512', '--steps', '0']);
  expect(cpu.code).toBe(2);
  expect(cpu.stderr).toContain('--memory-budget is a setting of --backend webgpu');
  // chosen: the whole step (1 task × group 4) fits 64 MiB, said with what it accounts (equal-reward groups kept so the step trains)
  const out = join(mkdtempSync(join(tmpdir(), 'tabrl-train-budget-')), 'run');
  const step = ['--backend', 'webgpu', '--keep-equal-groups', '--steps', '1', '--tasks-per-step', '1', '--group', '4', '--max-tokens', '4', '--out', out, '--overwrite'];
  // with a one-step SFT warm-up on 4 demonstrations: its micro-batch is chosen from the same budget, up to its batch of 4
  const chosen = await run([...step, '--memory-budget', '64', '--sft-steps', '1', '--demonstrations', '4', '--sft-batch', '4']);
  expect(chosen.code).toBe(0);
  expect(chosen.stderr).toMatch(/grpo 1\/1 {2}reward/);
  expect(chosen.stderr).toMatch(/SFT micro-batch 4 at T \d+: the largest that fits: model state \d+ MiB \+ batch \d+ MiB \(activations kept\) = \d+ MiB of the 64 MiB budget \(--memory-budget\); 4 is the most asked for/);
  expect(chosen.stderr).toMatch(/^ {3}micro-batch 4 at T \d+: the largest that fits: model state \d+ MiB \+ batch \d+ MiB \(activations kept\) = \d+ MiB of the 64 MiB budget \(--memory-budget\); 4 is the most asked for/m);
  // forced past the budget: the first GRPO step stops, naming the budget and the settings to change
  const tight = await run([...step, '--memory-budget', '1', '--micro-batch', '3']);
  expect(tight.code).not.toBe(0);
  expect(tight.stderr).toMatch(/training stopped: --micro-batch 3 cannot fit at T \d+: the step needs \d+ MiB \(model state \d+ MiB \+ batch \d+ MiB\), past the memory budget of 1 MiB; lower --micro-batch .*or raise --memory-budget/);
});
