/**
 * The playground's import/export pieces: warm-up JSONL (bad lines named), environment files, results
 * lines shared with `tabrl eval`, and the trained model's export zipped, unzipped and read back
 * against the model (a full fine-tune's folder and a LoRA adapter; what does not fit is refused).
 */
import { describe, expect, test } from 'vitest';
import type { RolloutRecord } from '../../../src/envs/index.ts';
import { recordToJson as writerRecordToJson } from '../../../src/cli/results-writer.ts';
import { recordsToJsonl } from '../../../src/envs/results-record.ts';
import { TINY_CONFIG } from '../../../src/gpu/inference/presets.ts';
import type { NamedTensors } from '../../../src/gpu/model/backend.ts';
import { loraLayout, paramShapes, type LoraConfig } from '../../../src/gpu/model/layout.ts';
import { checkEnvironmentSource, environmentFileName, environmentNameFromFile } from '../../../src/ui/features/transfer/environment-file.ts';
import { parseWarmupJsonl, warmupToJsonl } from '../../../src/ui/features/transfer/sft-jsonl.ts';
import { unzipFiles, zipFiles } from '../../../src/ui/features/transfer/zip.ts';
import { exportModelFiles, readModelImport } from '../../../src/workers/engine/model-files.ts';

function randomTensors(shapes: Array<[string, number[]]>, seed: number): NamedTensors {
  let state = seed;
  const next = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5;
  return new Map(shapes.map(([name, shape]) => [name, { shape: [...shape], data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, next) }]));
}

describe('warm-up JSONL', () => {
  const good = [
    { messages: [{ role: 'user', content: 'abc' }, { role: 'assistant', content: 'cba' }] },
    { messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'xy' }, { role: 'assistant', content: 'yx' }] },
  ];

  test('reads OpenAI-format chats and round-trips through the export', () => {
    const text = `${good.map((line) => JSON.stringify(line)).join('\n')}\n\n`;
    const transcripts = parseWarmupJsonl(text, 'data.jsonl');
    expect(transcripts).toEqual(good.map((line) => line.messages));
    expect(parseWarmupJsonl(warmupToJsonl(transcripts), 'again.jsonl')).toEqual(transcripts);
  });

  test.each([
    ['not JSON', '{"messages": [', /data\.jsonl, line 2: not valid JSON/],
    ['no messages array', '{"prompt": "x"}', /data\.jsonl, line 2: expected \{"messages"/],
    ['a message without content', '{"messages": [{"role": "user"}]}', /data\.jsonl, line 2: expected/],
    ['no assistant turn', '{"messages": [{"role": "user", "content": "x"}]}', /data\.jsonl, line 2: no assistant message/],
    ['an unknown role', '{"messages": [{"role": "robot", "content": "x"}, {"role": "assistant", "content": "y"}]}', /data\.jsonl, line 2: message 1 has role "robot"/],
  ])('names the bad line: %s', (_what, bad, expected) => {
    expect(() => parseWarmupJsonl(`${JSON.stringify(good[0])}\n${bad}\n${JSON.stringify(good[1])}\n`, 'data.jsonl')).toThrow(expected);
  });

  test('an empty file says it holds no chats', () => {
    expect(() => parseWarmupJsonl('\n\n', 'empty.jsonl')).toThrow(/empty\.jsonl holds no chats/);
  });
});

describe('environment files', () => {
  test('a name becomes a safe file name and back', () => {
    expect(environmentFileName('reverse-text (2)')).toBe('reverse-text (2).ts');
    expect(environmentFileName('a/b:c')).toBe('a-b-c.ts');
    expect(environmentFileName('  ')).toBe('environment.ts');
    expect(environmentNameFromFile('my-env.ts')).toBe('my-env');
  });

  test('an imported file must be text that defines loadEnvironment, and not huge', () => {
    expect(() => checkEnvironmentSource('export default function loadEnvironment() {}', 'ok.ts', 50)).not.toThrow();
    expect(() => checkEnvironmentSource('const x = 1;', 'x.ts', 12)).toThrow(/x\.ts defines no loadEnvironment/);
    expect(() => checkEnvironmentSource('loadEnvironment\u0000', 'bin.ts', 16)).toThrow(/not a text file/);
    expect(() => checkEnvironmentSource('loadEnvironment', 'big.ts', 300_000)).toThrow(/at most 200 kB/);
  });
});

describe('results lines', () => {
  test('the playground export writes the lines tabrl eval writes', () => {
    const record = {
      taskIndex: 3, rolloutIndex: 1, prompt: [{ role: 'user', content: 'abc' }], completion: [{ role: 'assistant', content: 'cba' }],
      answer: 'cba', info: {}, reward: 1, scores: { lcsReward: 1 }, passed: true, errors: [], stopReason: 'completed', truncated: false,
      turns: [], timings: { totalMs: 5 }, state: { prompt: [], completion: [], custom: 7 },
    } as unknown as RolloutRecord;
    const line = JSON.parse(recordsToJsonl([record]).trim()) as Record<string, unknown>;
    expect(line).toEqual(JSON.parse(JSON.stringify(writerRecordToJson(record))));
    expect(line).toMatchObject({ task_index: 3, rollout_index: 1, reward: 1, stop_reason: 'completed', state: { custom: 7 } });
  });
});

describe('model export zip', () => {
  test('a full fine-tune exports its model folder, which zips, unzips and reads back to the same weights', async () => {
    const weights = randomTensors(paramShapes(TINY_CONFIG), 1);
    const { kind, files } = exportModelFiles(weights, TINY_CONFIG, null, 'tiny');
    expect(kind).toBe('model');
    expect([...files.keys()].sort()).toEqual(['config.json', 'model.safetensors']);
    const back = unzipFiles(zipFiles(files), 'tiny-model.zip');
    const imported = await readModelImport(back, TINY_CONFIG, null, 'tiny-model.zip', 'tiny');
    expect(imported.kind).toBe('model');
    expect([...imported.tensors.keys()].sort()).toEqual([...weights.keys()].sort());
    for (const [name, tensor] of weights) expect(imported.tensors.get(name)!.data).toEqual(tensor.data);
  });

  test('a LoRA model exports its PEFT adapter, which reads back; a different rank or a full model is refused with the reason', async () => {
    const lora: LoraConfig = { rank: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] };
    const adapterShapes = loraLayout(TINY_CONFIG, lora).slots.map((slot): [string, number[]] => [slot.name, slot.shape]);
    const parameters = new Map([...randomTensors(paramShapes(TINY_CONFIG), 2), ...randomTensors(adapterShapes, 3)]);
    const { kind, files } = exportModelFiles(parameters, TINY_CONFIG, lora, 'tiny');
    expect(kind).toBe('adapter');
    const back = unzipFiles(zipFiles(files));
    const imported = await readModelImport(back, TINY_CONFIG, lora, 'adapter.zip', 'tiny');
    expect([...imported.tensors.keys()].sort()).toEqual(adapterShapes.map(([name]) => name).sort());
    for (const [name] of adapterShapes) expect(imported.tensors.get(name)!.data).toEqual(parameters.get(name)!.data);

    await expect(readModelImport(back, TINY_CONFIG, { ...lora, rank: 4 }, 'adapter.zip', 'tiny')).rejects.toThrow(/adapter\.zip does not fit the loaded model: its adapter has rank 2.*rank 4/);
    await expect(readModelImport(back, TINY_CONFIG, null, 'adapter.zip', 'tiny')).rejects.toThrow(/is a LoRA adapter, but the loaded model \(tiny\) is fully fine-tuned/);
  });

  test('weights of another model size are refused, naming the difference', async () => {
    const bigger = { ...TINY_CONFIG, hidden_size: TINY_CONFIG.hidden_size * 2 };
    const { files } = exportModelFiles(randomTensors(paramShapes(bigger), 4), bigger, null, 'bigger');
    await expect(readModelImport(unzipFiles(zipFiles(files)), TINY_CONFIG, null, 'bigger.zip', 'tiny')).rejects.toThrow(/bigger\.zip does not fit the loaded model \(tiny\): its config\.json differs in hidden_size/);
  });

  test('an archive of other files, or no archive at all, says what it is', async () => {
    await expect(readModelImport(new Map([['notes.txt', new Uint8Array(1)]]), TINY_CONFIG, null, 'x.zip', 'tiny')).rejects.toThrow(/neither a PEFT adapter .* nor a model folder .* it has notes\.txt/);
    expect(() => unzipFiles(new TextEncoder().encode('not a zip'), 'x.zip')).toThrow(/x\.zip is not a zip archive/);
  });
});
