/**
 * Fetches a model the app ships (SHIPPED_MODELS in src/models/shipped-models.ts: nano, nano-wordle, nano-tools, nano-2m) from
 * the app's own files for the engine worker: config.json and the f16 weights of its folder (the
 * tokenizer is the byte tokenizer, which needs no file). A folder that is missing, or that holds
 * anything but finite weights of the model's own shapes, is refused with a message that names the
 * model and says what to do. It builds no backend; `fetch` is injected, so tests run it in Node.
 */
import { loadModelFolder, type LoadedModel } from '../../gpu/io/model-folder.ts';
import type { NamedTensors } from '../../gpu/model/backend.ts';
import type { ModelConfig } from '../../gpu/model/config.ts';
import { findShippedModel, shippedModelIds } from '../../models/shipped-models.ts';
import { errorMessage } from '../../common/error-message.ts';

/** A shipped model's pretrained weights as fetched once from `url` (a reset starts again from them without fetching). */
export interface PretrainedByteModel {
  id: string;
  url: string;
  config: ModelConfig;
  tensors: NamedTensors;
}

/** Where and how to fetch: the URL `url` is relative to (the worker's location), an abort signal, and `fetch` (the global one by default). */
interface ShippedModelFetchOptions {
  baseUrl: string;
  signal: AbortSignal;
  fetch?: (input: URL, init: { signal: AbortSignal }) => Promise<Response>;
}

/**
 * Fetches shipped model `id` from its folder at `url`. Refused with what to do: an id the app does
 * not ship; a file that does not come (an HTTP error, or the web page a single-page server answers
 * for any path); a folder that does not parse, whose config.json is not the model's shapes, or
 * whose weights hold a NaN or an infinity.
 */
export async function fetchShippedModel(id: string, url: string, options: ShippedModelFetchOptions): Promise<PretrainedByteModel> {
  const shipped = findShippedModel(id);
  if (!shipped) throw new Error(`"${id}" is not a model this app ships (it ships ${shippedModelIds().join(', ')}); choose one of those, tiny or a real model`);
  const fetchFile = options.fetch ?? ((input, init) => fetch(input, init));
  const folder = new URL(url, options.baseUrl);
  const whatToDo = `Choose another model in the Policy card; whoever runs this app should restore public/models/${id} (git checkout public/models/${id}) and build the app again`;
  const damaged = (why: string) => new Error(`${id}: the app's models/${id} folder is damaged (${why}). ${whatToDo}.`);
  let missing: Error | null = null;
  const read = async (name: string) => {
    const response = await fetchFile(new URL(name, folder), { signal: options.signal });
    const why = !response.ok ? `HTTP ${response.status}` : response.headers.get('content-type')?.startsWith('text/html') ? 'the server answered with a web page' : null;
    if (why !== null) {
      missing ??= new Error(`${id}: ${name} could not be fetched (${why}): the app's models/${id} folder is missing. ${whatToDo}.`);
      throw missing;
    }
    return new Uint8Array(await response.arrayBuffer());
  };
  let loaded: LoadedModel;
  try {
    loaded = await loadModelFolder(read, id);
  } catch (error) {
    if (options.signal.aborted) throw error;
    throw missing ?? damaged(errorMessage(error));
  }
  const differs = (Object.keys(shipped.config) as (keyof ModelConfig)[]).filter((field) => loaded.config[field] !== shipped.config[field]);
  if (differs.length > 0)
    throw damaged(`its config.json describes another model: ${differs.map((field) => `${field} ${String(loaded.config[field])}, not ${String(shipped.config[field])}`).join('; ')}`);
  for (const [name, tensor] of loaded.tensors) {
    if (!tensor.data.every(Number.isFinite)) throw damaged(`tensor ${name} holds a NaN or an infinity`);
  }
  return { id, url, config: loaded.config, tensors: loaded.tensors };
}
