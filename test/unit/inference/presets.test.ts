// The presets table: ids, well-formed Hugging Face URLs, configs that round-trip through
// config.json parsing, sizes that agree with the shapes, and the CLI's message for a real preset.
import { describe, expect, test } from 'vitest';
import { openModel } from '../../../src/cli/open-model.ts';
import { SMOLLM2_135M_CONFIG, TINY_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { DEFAULT_REAL_PRESET_ID, findRealPreset, huggingFaceFileUrl, MODEL_PRESETS, REAL_MODEL_PRESETS } from '../../../src/models/catalogue.ts';
import { modelConfigToJson, parseModelConfig } from '../../../src/gpu/model/config.ts';
import { modelFitProblem } from '../../../src/gpu/io/model-fit.ts';
import { formatBytes, presetDownloadSpec } from '../../../src/models/cache.ts';
import { countParameters } from '../../../src/workers/engine/real-model.ts';

describe('real model presets', () => {
  test('the four presets, by id, with SmolLM2-135M-Instruct the default', () => {
    expect(REAL_MODEL_PRESETS.map((preset) => preset.id)).toEqual(['smollm2-135m-instruct', 'smollm2-360m-instruct', 'qwen2.5-0.5b-instruct', 'qwen3-0.6b']);
    expect(DEFAULT_REAL_PRESET_ID).toBe('smollm2-135m-instruct');
    expect(findRealPreset(DEFAULT_REAL_PRESET_ID)?.config).toBe(SMOLLM2_135M_CONFIG);
    expect(findRealPreset('tiny')).toBeUndefined();
    expect(MODEL_PRESETS.tiny).toBe(TINY_CONFIG);
    expect(MODEL_PRESETS['smollm2-135m-shapes']).toBe(SMOLLM2_135M_CONFIG);
  });

  test.each(REAL_MODEL_PRESETS.map((preset) => [preset.id, preset] as const))('%s: well-formed URLs, the needed files, a config that parses', (_id, preset) => {
    const names = preset.files.map((file) => file.name);
    for (const needed of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']) expect(names).toContain(needed);
    for (const file of preset.files) {
      const url = new URL(huggingFaceFileUrl(preset.repo, file.name));
      expect(url.href).toBe(`https://huggingface.co/${preset.repo}/resolve/main/${file.name}`);
      expect(url.pathname.split('/')).toHaveLength(6); // "", owner, name, resolve, main, file
    }
    expect(presetDownloadSpec(preset).baseUrl).toBe(`https://huggingface.co/${preset.repo}/resolve/main/`);
    expect(parseModelConfig(modelConfigToJson(preset.config), preset.id)).toEqual(preset.config);
    // bf16 weights: 2 bytes per parameter (some repos also store the tied lm_head), plus the tokenizer (a few MB).
    const weightBytes = 2 * countParameters(preset.config);
    const lmHeadBytes = 2 * preset.config.vocab_size * preset.config.hidden_size;
    expect(preset.downloadBytes).toBeGreaterThan(weightBytes);
    expect(preset.downloadBytes).toBeLessThan((weightBytes + lmHeadBytes) * 1.01 + 20e6);
  });

  test('sizes format as the picker shows them', () => {
    expect(formatBytes(findRealPreset('smollm2-135m-instruct')!.downloadBytes)).toBe('272 MB');
    expect(formatBytes(findRealPreset('qwen3-0.6b')!.downloadBytes)).toBe('1.5 GB');
  });

  test('the device check: SmolLM2-135M fits 1 GiB buffers in f32, Qwen3-0.6B needs f16, and a small binding limit names the tensor', () => {
    const gib = { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 30 };
    expect(modelFitProblem(SMOLLM2_135M_CONFIG, gib, { f16: false })).toBeNull();
    expect(modelFitProblem(findRealPreset('qwen3-0.6b')!.config, gib, { f16: false })).toMatch(/maxBufferSize/);
    expect(modelFitProblem(SMOLLM2_135M_CONFIG, { maxBufferSize: 2 ** 30, maxStorageBufferBindingSize: 2 ** 26 }, { f16: false })).toMatch(/model\.embed_tokens\.weight, 113 MB in f32.*maxStorageBufferBindingSize of 67 MB/);
  });

  test('the CLI says a real preset needs a downloaded folder and lists its URLs', async () => {
    await expect(openModel('smollm2-135m-instruct', { backend: 'cpu', seed: 0 })).rejects.toThrow(/downloads nothing \(Node is offline-first\)[\s\S]*https:\/\/huggingface\.co\/HuggingFaceTB\/SmolLM2-135M-Instruct\/resolve\/main\/model\.safetensors/);
  });
});
