/** Writes nano's model folder (config, f16 weights, byte tokenizer files, pretraining record) to a directory. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serializeByteModelFolder } from '../../src/gpu/io/byte-model-folder.ts';
import type { NamedTensors } from '../../src/gpu/model/backend.ts';
import type { ModelConfig } from '../../src/gpu/model/config.ts';

/** Writes the folder of a model of shape `config` (NANO_CONFIG for nano itself); `record` becomes pretraining.json (seed, data, time, machine, loss curve). */
export async function writeNanoFolder(directory: string, config: ModelConfig, tensors: NamedTensors, record: Record<string, unknown>): Promise<void> {
  await mkdir(directory, { recursive: true });
  for (const [name, bytes] of serializeByteModelFolder(config, tensors, { 'pretraining.json': record })) {
    await writeFile(join(directory, `${name}.tmp`), bytes);
  }
  // Rename after all are written, so an interrupted save never leaves a half-written checkpoint.
  const { rename } = await import('node:fs/promises');
  for (const name of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'pretraining.json']) {
    await rename(join(directory, `${name}.tmp`), join(directory, name));
  }
}
