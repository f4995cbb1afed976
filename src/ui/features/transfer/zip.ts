/**
 * Zip archives of a few named files (a model export, an adapter) through fflate: `zipFiles` packs
 * them, `unzipFiles` unpacks an uploaded archive (folders inside it are flattened to their file
 * names, as a downloaded-then-rezipped folder often nests them). Pure: bytes in, bytes out.
 */
import { unzipSync, zipSync } from 'fflate';
import { errorMessage } from '../../../common/error-message.ts';

/** Packs `files` (name → bytes) into one zip archive (deflated; safetensors of trained floats shrink a little). */
export function zipFiles(files: ReadonlyMap<string, Uint8Array>): Uint8Array {
  return zipSync(Object.fromEntries(files), { level: 6 });
}

/** Unpacks a zip archive into its files by base name; throws saying what the file is when it is not a zip or holds two files of one name. */
export function unzipFiles(bytes: Uint8Array, label = 'the archive'): Map<string, Uint8Array> {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes);
  } catch (error) {
    throw new Error(`${label} is not a zip archive this page can read (${errorMessage(error)}). Choose the .zip a "Download model" made.`);
  }
  const files = new Map<string, Uint8Array>();
  for (const [path, data] of Object.entries(entries)) {
    if (path.endsWith('/')) continue; // a folder entry
    const name = path.split('/').at(-1)!;
    if (name.startsWith('.') || path.startsWith('__MACOSX/')) continue;
    if (files.has(name)) throw new Error(`${label} holds two files named ${name}; keep one model's files in it.`);
    files.set(name, data);
  }
  return files;
}
