/**
 * safetensors parsing and writing (exact f16/bf16 conversion, clear errors on damaged files) and
 * the Hugging Face model-folder loader, driven through an in-memory readFile.
 */
import { describe, expect, it } from 'vitest';
import { loadModelFolder, serializeModelFolder } from '../../../src/gpu/io/model-folder.ts';
import { f16BitsToF32 } from '../../../src/gpu/io/half.ts';
import { bf16BitsToF32, parseSafetensors, serializeSafetensors } from '../../../src/gpu/io/safetensors.ts';
import type { NamedTensors } from '../../../src/gpu/model/backend.ts';
import { createCpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import type { ModelConfig } from '../../../src/gpu/model/config.ts';
import { expectClose, randomArray } from '../../support/expect-close.ts';

/** Builds a safetensors file by hand from raw little-endian bytes per tensor. */
function rawSafetensors(entries: Array<{ name: string; dtype: string; shape: number[]; bytes: Uint8Array }>): Uint8Array {
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const { name, dtype, shape, bytes } of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes.length] };
    offset += bytes.length;
  }
  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const file = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(file.buffer).setUint32(0, headerBytes.length, true);
  file.set(headerBytes, 8);
  let at = 8 + headerBytes.length;
  for (const { bytes } of entries) {
    file.set(bytes, at);
    at += bytes.length;
  }
  return file;
}

const u16 = (values: number[]): Uint8Array => {
  const bytes = new Uint8Array(values.length * 2);
  values.forEach((v, i) => new DataView(bytes.buffer).setUint16(i * 2, v, true));
  return bytes;
};

describe('safetensors', () => {
  it('round-trips F32 tensors and metadata', () => {
    const tensors: NamedTensors = new Map([
      ['a', { shape: [2, 3], data: randomArray(6, 1) }],
      ['b.weight', { shape: [5], data: randomArray(5, 2) }],
      ['empty', { shape: [0, 4], data: new Float32Array(0) }],
    ]);
    const bytes = serializeSafetensors(tensors, { format: 'pt' });
    const headerLength = new DataView(bytes.buffer).getUint32(0, true);
    expect(headerLength % 8).toBe(0);
    const parsed = parseSafetensors(bytes, 'x.safetensors');
    expect(parsed.metadata).toEqual({ format: 'pt' });
    expect([...parsed.tensors.keys()]).toEqual(['a', 'b.weight', 'empty']);
    for (const [name, tensor] of tensors) {
      expect(parsed.tensors.get(name)!.shape).toEqual(tensor.shape);
      expectClose(parsed.tensors.get(name)!.data, tensor.data, { atol: 0, rtol: 0, label: name });
    }
  });

  it('converts f16 and bf16 exactly, including subnormals, infinities and NaN', () => {
    expect([0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x8000, 0x3555].map(f16BitsToF32)).toEqual([
      1, -2, 65504, 2 ** -24, 1023 * 2 ** -24, -0, 0.333251953125,
    ]);
    expect(f16BitsToF32(0x7c00)).toBe(Infinity);
    expect(f16BitsToF32(0xfc00)).toBe(-Infinity);
    expect(f16BitsToF32(0x7e00)).toBeNaN();
    expect([0x3f80, 0x4049, 0xc2f7, 0x0001].map(bf16BitsToF32)).toEqual([1, 3.140625, -123.5, Math.fround(2 ** -133)]);
    expect(bf16BitsToF32(0x7f80)).toBe(Infinity);
    const file = rawSafetensors([
      { name: 'half', dtype: 'F16', shape: [2], bytes: u16([0x3c00, 0xc000]) },
      { name: 'brain', dtype: 'BF16', shape: [1, 2], bytes: u16([0x4049, 0x3f80]) },
    ]);
    const parsed = parseSafetensors(file);
    expect(Array.from(parsed.tensors.get('half')!.data)).toEqual([1, -2]);
    expect(Array.from(parsed.tensors.get('brain')!.data)).toEqual([3.140625, 1]);
    expect(parsed.dtypes.get('brain')).toBe('BF16');
  });

  it('says which file is damaged and how', () => {
    const good = serializeSafetensors(new Map([['w', { shape: [4], data: randomArray(4, 3) }]]));
    expect(() => parseSafetensors(good.subarray(0, 5), 'm.safetensors')).toThrow(/m\.safetensors: truncated: 5 bytes/);
    expect(() => parseSafetensors(good.subarray(0, 20), 'm.safetensors')).toThrow(/m\.safetensors: truncated or not a safetensors file: the header claims/);
    expect(() => parseSafetensors(good.subarray(0, good.length - 4), 'm.safetensors')).toThrow(/m\.safetensors: truncated: tensor w ends at data byte 16, but the file holds only 12/);
    const corrupt = good.slice();
    corrupt[8] = 0x7b + 1; // '{' → '|'
    expect(() => parseSafetensors(corrupt, 'm.safetensors')).toThrow(/m\.safetensors: corrupt header: not valid JSON/);
    const wrongSize = rawSafetensors([{ name: 'w', dtype: 'F32', shape: [3], bytes: new Uint8Array(8) }]);
    expect(() => parseSafetensors(wrongSize, 'm.safetensors')).toThrow(/tensor w: data_offsets \[0, 8\] hold 8 bytes, but F32 \[3\] needs 12/);
    const ints = rawSafetensors([{ name: 'ids', dtype: 'I64', shape: [1], bytes: new Uint8Array(8) }]);
    expect(() => parseSafetensors(ints, 'm.safetensors')).toThrow(/tensor ids: dtype I64 is not supported/);
  });
});

const TINY: ModelConfig = {
  architecture: 'Qwen2ForCausalLM',
  vocab_size: 11,
  hidden_size: 8,
  intermediate_size: 12,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 4,
  rope_theta: 10000,
  rms_norm_eps: 1e-6,
  tie_word_embeddings: true,
  attention_bias: true,
  attention_output_bias: false,
  qk_norm: false,
};

/** An in-memory folder as a readFile. */
function memoryFolder(files: Map<string, Uint8Array>): (name: string) => Promise<Uint8Array> {
  return async (name) => {
    const bytes = files.get(name);
    if (bytes === undefined) throw new Error(`ENOENT: ${name}`);
    return bytes;
  };
}

describe('loadModelFolder', () => {
  it('loads config.json + model.safetensors, ignoring a tied lm_head and extra tensors', async () => {
    const backend = await createCpuBackend(TINY, { seed: 5 });
    const params = await backend.getParameters();
    const files = serializeModelFolder(TINY, new Map([...params, ['lm_head.weight', params.get('model.embed_tokens.weight')!], ['model.layers.0.self_attn.rotary_emb.inv_freq', { shape: [2], data: new Float32Array(2) }]]));
    const loaded = await loadModelFolder(memoryFolder(files), 'tiny');
    expect(loaded.config).toEqual(TINY);
    expect(loaded.ignored.sort()).toEqual(['lm_head.weight', 'model.layers.0.self_attn.rotary_emb.inv_freq']);
    expect([...loaded.tensors.keys()]).toEqual([...params.keys()]);
    for (const [name, tensor] of params) expectClose(loaded.tensors.get(name)!.data, tensor.data, { atol: 0, rtol: 0, label: name });
  });

  it('loads sharded weights through model.safetensors.index.json', async () => {
    const params = await (await createCpuBackend(TINY, { seed: 6 })).getParameters();
    const names = [...params.keys()];
    const first = new Map(names.slice(0, 4).map((name) => [name, params.get(name)!]));
    const second = new Map(names.slice(4).map((name) => [name, params.get(name)!]));
    const weightMap = Object.fromEntries(names.map((name, i) => [name, i < 4 ? 'model-00001-of-00002.safetensors' : 'model-00002-of-00002.safetensors']));
    const files = new Map([
      ['config.json', serializeModelFolder(TINY, params).get('config.json')!],
      ['model.safetensors.index.json', new TextEncoder().encode(JSON.stringify({ weight_map: weightMap }))],
      ['model-00001-of-00002.safetensors', serializeSafetensors(first)],
      ['model-00002-of-00002.safetensors', serializeSafetensors(second)],
    ]);
    const loaded = await loadModelFolder(memoryFolder(files));
    expect(loaded.tensors.size).toBe(params.size);
  });

  it('names the folder and the problem: no config, no weights, a missing or misshapen tensor', async () => {
    const params = await (await createCpuBackend(TINY, { seed: 7 })).getParameters();
    const files = serializeModelFolder(TINY, params);
    await expect(loadModelFolder(memoryFolder(new Map()), 'dir')).rejects.toThrow(/dir: cannot read config\.json \(ENOENT: config\.json\)/);
    await expect(loadModelFolder(memoryFolder(new Map([['config.json', files.get('config.json')!]])), 'dir')).rejects.toThrow(
      /dir: cannot read model\.safetensors \(ENOENT: model\.safetensors\) nor model\.safetensors\.index\.json/,
    );
    const withoutNorm = new Map(params);
    withoutNorm.delete('model.norm.weight');
    await expect(loadModelFolder(memoryFolder(serializeModelFolder(TINY, withoutNorm)), 'dir')).rejects.toThrow(/dir: 1 parameter\(s\) missing from the weights: model\.norm\.weight/);
    const misshapen = new Map(params);
    misshapen.set('model.norm.weight', { shape: [4, 2], data: new Float32Array(8) });
    await expect(loadModelFolder(memoryFolder(serializeModelFolder(TINY, misshapen)), 'dir')).rejects.toThrow(/tensor model\.norm\.weight has shape \[4,2\], config\.json implies \[8\]/);
  });

  it('refuses weights with more layers, or biases, than config.json describes, instead of running a cut-down model', async () => {
    // A 2-layer checkpoint whose config.json says 1 layer used to load its first layer only.
    const twoLayers = await (await createCpuBackend({ ...TINY, num_hidden_layers: 2 }, { seed: 8 })).getParameters();
    const files = new Map(serializeModelFolder({ ...TINY, num_hidden_layers: 2 }, twoLayers));
    files.set('config.json', serializeModelFolder(TINY, twoLayers).get('config.json')!);
    await expect(loadModelFolder(memoryFolder(files), 'dir')).rejects.toThrow(/dir: the weights hold \d+ layer tensor\(s\) that config\.json has no place for \(model\.layers\.1\..*config\.json says 1 layers/);
    // Biases in the weights that a config without attention_bias would drop.
    const noBias: ModelConfig = { ...TINY, architecture: 'LlamaForCausalLM', attention_bias: false };
    const biased = await (await createCpuBackend(TINY, { seed: 9 })).getParameters();
    const biasFiles = new Map(serializeModelFolder(TINY, biased));
    biasFiles.set('config.json', serializeModelFolder(noBias, biased).get('config.json')!);
    await expect(loadModelFolder(memoryFolder(biasFiles), 'dir')).rejects.toThrow(/q_proj\.bias.*without attention biases/);
  });
});
