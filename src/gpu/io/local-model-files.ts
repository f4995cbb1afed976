/**
 * A model folder from files the person picked (an `<input type=file webkitdirectory>` folder or
 * several files): a ReadFile over them matched by base name, after a check that says which of the
 * needed files are missing. `File` objects structured-clone into a worker, so this runs in a page
 * or a worker (WebWorker lib only). It reads nothing until asked.
 */
import type { ReadFile } from './model-folder.ts';

/** The files a model folder needs besides its weights (model.safetensors, or an index and its shards). */
const REQUIRED_LOCAL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'] as const;

/** The part of a File this module reads (a File, or a test double). */
export interface PickedFile {
  readonly name: string;
  /** The path inside the picked folder ("SmolLM2/config.json"), empty for single files. */
  readonly webkitRelativePath?: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** Returns the names of needed files absent from the picked ones (empty when the folder is complete). */
export function missingLocalFiles(files: readonly PickedFile[]): string[] {
  const names = new Set(files.map((file) => file.name));
  const missing: string[] = REQUIRED_LOCAL_FILES.filter((name) => !names.has(name));
  if (!names.has('model.safetensors') && !names.has('model.safetensors.index.json')) missing.push('model.safetensors');
  return missing;
}

/** A ReadFile over picked files by base name (the shallowest wins when a folder has two); throws listing what is missing. */
export function localModelReader(files: readonly PickedFile[], label = 'the chosen files'): ReadFile {
  const missing = missingLocalFiles(files);
  if (missing.length > 0) {
    const given =
      files.length === 0
        ? 'no files'
        : files
            .slice(0, 8)
            .map((file) => file.name)
            .join(', ') + (files.length > 8 ? ', …' : '');
    throw new Error(
      `${label} lack ${missing.join(', ')} (given: ${given}). Choose a Hugging Face model folder with config.json, model.safetensors ` +
        '(or model.safetensors.index.json and its shards), tokenizer.json and tokenizer_config.json.',
    );
  }
  const depth = (file: PickedFile) => (file.webkitRelativePath ?? '').split('/').length;
  const byName = new Map<string, PickedFile>();
  for (const file of files) {
    const seen = byName.get(file.name);
    if (!seen || depth(file) < depth(seen)) byName.set(file.name, file);
  }
  return async (name) => {
    const file = byName.get(name);
    if (!file) throw new Error(`${name} is not among ${label}`);
    return new Uint8Array(await file.arrayBuffer());
  };
}
