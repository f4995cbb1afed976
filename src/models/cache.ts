/**
 * Downloads a model's files over HTTP (a Hugging Face preset, or any folder URL) with progress, and
 * keeps them in Cache Storage so a second load is offline and fast. It runs in a page and in a worker
 * (WebWorker lib only); fetch, the cache and the storage estimate are injected, so every failure can
 * be tested without a network. It parses no weights: the bytes go to model-folder.ts and
 * hf-tokenizer.ts (src/gpu/io) through a ReadFile.
 *
 * Why Cache Storage and not OPFS: it has the same promise API in a page and a worker (OPFS's fast
 * sync handles are worker-only), it is keyed by the file's URL, an entry is stored only once its
 * whole body is there (no half-written files after a cancel), and removing a model is a delete per
 * URL. A small manifest entry, written after the last file, marks a model as completely cached.
 */
import { formatBytes } from '../common/format-bytes.ts';
import { parseModelConfig } from '../gpu/model/config.ts';
import type { ReadFile } from '../gpu/io/model-folder.ts';
import { huggingFaceFileUrl, type ModelFile, type RealModelPreset } from './catalogue.ts';
import { errorMessage } from '../common/error-message.ts';

export { formatBytes };

/** The Cache Storage cache that holds downloaded model files. */
export const MODEL_CACHE_NAME = 'tabrl-models-v1';
const MANIFEST_FILE = 'tabrl-manifest.json';

/** What to download: a model's files under one base URL. */
export interface ModelDownloadSpec {
  /** Names the model in messages. */
  name: string;
  /** The folder URL, ending in "/"; a file's URL is baseUrl + its name. */
  baseUrl: string;
  files: readonly ModelFile[];
  /** Approximate size of all files in bytes, checked against the free storage before downloading. */
  downloadBytes: number;
}

/** The browser APIs the download uses, injectable for tests. */
export interface ModelStorage {
  fetch: (url: string, init?: { signal?: AbortSignal }) => Promise<Response>;
  caches: CacheStorage;
  /** navigator.storage.estimate, when the browser has it. */
  estimate?: () => Promise<StorageEstimate>;
}

/** Where a download is: the file being read and the bytes done of it and of all files. */
export interface ModelDownloadProgress {
  file: string;
  fileLoaded: number;
  fileTotal: number;
  loaded: number;
  total: number;
  /** True when this file came from the cache. */
  fromCache: boolean;
}

/** Options of fetchModelFiles. */
export interface FetchModelOptions {
  onProgress?: (progress: ModelDownloadProgress) => void;
  signal?: AbortSignal;
  /** Progress is reported at most this often while a file streams (default 100 ms); a file's last bytes are always reported. */
  progressIntervalMs?: number;
}

/** Why a download failed: a missing file, the network (or CORS), a full storage quota, another HTTP status, an unusable config, or a cancel. */
export type ModelDownloadErrorKind = 'not-found' | 'network' | 'quota' | 'http' | 'config' | 'aborted';

/** A download failure with a message that says what to do. */
export class ModelDownloadError extends Error {
  override readonly name = 'ModelDownloadError';
  /** Creates the error; kind lets callers tell failures apart. */
  constructor(
    message: string,
    readonly kind: ModelDownloadErrorKind,
  ) {
    super(message);
  }
}

/** The download spec of a Hugging Face preset (its repository's main branch). */
export function presetDownloadSpec(preset: RealModelPreset): ModelDownloadSpec {
  return { name: preset.name, baseUrl: huggingFaceFileUrl(preset.repo, ''), files: preset.files, downloadBytes: preset.downloadBytes };
}

/** The browser's own fetch, Cache Storage and storage estimate (in a page or a worker). */
export function browserModelStorage(): ModelStorage {
  if (typeof caches === 'undefined') {
    throw new ModelDownloadError(
      'This browser offers no Cache Storage here (it needs a secure context: https or localhost), so models cannot be downloaded and kept. Open the app over https, or choose "Local folder…".',
      'network',
    );
  }
  const storage = (globalThis as { navigator?: { storage?: { estimate?: () => Promise<StorageEstimate> } } }).navigator?.storage;
  return {
    fetch: (url, init) => fetch(url, init),
    caches,
    ...(storage?.estimate ? { estimate: () => storage.estimate!() } : {}),
  };
}

interface Manifest {
  /** Bytes of each stored file. */
  files: Record<string, number>;
  /** Optional files the server does not have. */
  absent: string[];
}

async function readManifest(cache: Cache, spec: ModelDownloadSpec): Promise<Manifest | null> {
  const response = await cache.match(spec.baseUrl + MANIFEST_FILE);
  if (!response) return null;
  try {
    const manifest = (await response.json()) as Manifest;
    return typeof manifest.files === 'object' && Array.isArray(manifest.absent) ? manifest : null;
  } catch {
    return null;
  }
}

/** Whether every file of the model is in the cache (so loading it needs no network). */
export async function isModelCached(spec: ModelDownloadSpec, storage: ModelStorage): Promise<boolean> {
  const cache = await storage.caches.open(MODEL_CACHE_NAME);
  const manifest = await readManifest(cache, spec);
  if (!manifest) return false;
  for (const file of spec.files) {
    if (manifest.absent.includes(file.name)) continue;
    if (!(await cache.match(spec.baseUrl + file.name))) return false;
  }
  return true;
}

/** Removes the model's files from the cache; returns whether anything was there. */
export async function deleteCachedModel(spec: ModelDownloadSpec, storage: ModelStorage): Promise<boolean> {
  const cache = await storage.caches.open(MODEL_CACHE_NAME);
  let deleted = await cache.delete(spec.baseUrl + MANIFEST_FILE);
  for (const file of spec.files) deleted = (await cache.delete(spec.baseUrl + file.name)) || deleted;
  return deleted;
}

/**
 * Returns the model's files by name, from the cache where they are and from the network otherwise
 * (each stored as it completes). config.json is fetched and checked first, so an unsupported
 * architecture fails before the weights download; free storage is checked against the download size.
 */
export async function fetchModelFiles(spec: ModelDownloadSpec, storage: ModelStorage, options: FetchModelOptions = {}): Promise<Map<string, Uint8Array>> {
  const { signal } = options;
  const interval = options.progressIntervalMs ?? 100;
  const cache = await storage.caches.open(MODEL_CACHE_NAME);
  const stored = await readManifest(cache, spec);
  const manifest = stored ?? { files: {}, absent: [] };
  const files = new Map<string, Uint8Array>();
  const cached = new Map<string, Response>();
  const wanted: ModelFile[] = [];
  for (const file of spec.files) {
    if (manifest.absent.includes(file.name)) continue;
    const hit = await cache.match(spec.baseUrl + file.name);
    if (hit) cached.set(file.name, hit);
    else wanted.push(file);
  }

  // Totals: cached files by their stored length, downloads by Content-Length once their headers arrive.
  const totals = new Map<string, number>();
  const loadedBy = new Map<string, number>();
  for (const [name, response] of cached) totals.set(name, Number(response.headers.get('content-length') ?? manifest.files[name] ?? 0));
  const sum = (map: Map<string, number>) => [...map.values()].reduce((a, b) => a + b, 0);
  let lastReport = 0;
  const report = (file: string, fromCache: boolean, force: boolean) => {
    const now = Date.now();
    if (!force && now - lastReport < interval) return;
    lastReport = now;
    const fileLoaded = loadedBy.get(file) ?? 0;
    options.onProgress?.({ file, fileLoaded, fileTotal: Math.max(totals.get(file) ?? 0, fileLoaded), loaded: sum(loadedBy), total: Math.max(sum(totals), sum(loadedBy)), fromCache });
  };

  if (wanted.length > 0) await checkQuota(spec, storage, sum(totals));

  for (const [name, response] of cached) {
    throwIfAborted(signal);
    const bytes = new Uint8Array(await response.arrayBuffer());
    files.set(name, bytes);
    totals.set(name, bytes.length);
    loadedBy.set(name, bytes.length);
    report(name, true, true);
  }

  // config.json first: a model this engine cannot run fails before its weights download.
  const ordered = [...wanted.filter((file) => file.name === 'config.json'), ...wanted.filter((file) => file.name !== 'config.json')];
  if (ordered[0]?.name === 'config.json') {
    const bytes = await download(ordered.shift()!);
    if (bytes) files.set('config.json', bytes);
  }
  checkConfig(spec, files.get('config.json'));

  async function download(file: ModelFile): Promise<Uint8Array | null> {
    const url = spec.baseUrl + file.name;
    const response = await startDownload(spec, storage, file, url, signal);
    if (response === null) {
      manifest.absent.push(file.name);
      return null;
    }
    const length = Number(response.headers.get('content-length') ?? NaN);
    if (Number.isFinite(length)) totals.set(file.name, length);
    loadedBy.set(file.name, 0);
    const bytes = await readBody(response, Number.isFinite(length) ? length : null, file.name, url, signal, (loaded) => {
      loadedBy.set(file.name, loaded);
      report(file.name, false, false);
    });
    totals.set(file.name, bytes.length);
    loadedBy.set(file.name, bytes.length);
    report(file.name, false, true);
    await storeFile(spec, storage, cache, url, bytes, response.headers.get('content-type'));
    manifest.files[file.name] = bytes.length;
    return bytes;
  }

  const results = await Promise.all(ordered.map(async (file) => [file.name, await download(file)] as const));
  for (const [name, bytes] of results) if (bytes) files.set(name, bytes);
  for (const [name] of cached) manifest.files[name] ??= files.get(name)!.length;
  if (wanted.length > 0 || stored === null) {
    await storeFile(spec, storage, cache, spec.baseUrl + MANIFEST_FILE, new TextEncoder().encode(JSON.stringify(manifest)), 'application/json');
  }
  return files;
}

/** A ReadFile over fetched files: a missing name rejects, as loadModelFolder and loadHfTokenizer expect. */
export function readFromFiles(files: ReadonlyMap<string, Uint8Array>, label: string): ReadFile {
  return async (name) => {
    const bytes = files.get(name);
    if (!bytes) throw new Error(`${name} is not among the files of ${label}`);
    return bytes;
  };
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ModelDownloadError('The download was cancelled; the files already complete stay cached.', 'aborted');
}

async function checkQuota(spec: ModelDownloadSpec, storage: ModelStorage, cachedBytes: number): Promise<void> {
  if (!storage.estimate) return;
  let estimate: StorageEstimate;
  try {
    estimate = await storage.estimate();
  } catch {
    return; // no estimate: the cache.put check below still catches a full quota
  }
  if (estimate.quota === undefined) return;
  const needed = Math.max(0, spec.downloadBytes - cachedBytes);
  const available = Math.max(0, estimate.quota - (estimate.usage ?? 0));
  if (needed > available) throw quotaError(spec, needed, available);
}

function quotaError(spec: ModelDownloadSpec, needed: number, available: number | null): ModelDownloadError {
  return new ModelDownloadError(
    `${spec.name} needs about ${formatBytes(needed)} of browser storage, but ${available === null ? 'this site has run out of it' : `only ${formatBytes(available)} is free for this site`}. ` +
      'Remove other models from the cache ("Remove from cache"), free disk space or site data, or choose a smaller model (or "Local folder…", which stores nothing).',
    'quota',
  );
}

/** Fetches a file's headers; returns null for an optional file the server does not have. */
async function startDownload(spec: ModelDownloadSpec, storage: ModelStorage, file: ModelFile, url: string, signal: AbortSignal | undefined): Promise<Response | null> {
  throwIfAborted(signal);
  let response: Response;
  try {
    response = await storage.fetch(url, signal ? { signal } : {});
  } catch (error) {
    throwIfAborted(signal);
    throw networkError(spec, file.name, url, error);
  }
  if (response.status === 404) {
    if (file.optional) return null;
    throw new ModelDownloadError(
      `${spec.name}: ${file.name} was not found at ${url} (HTTP 404). The repository may have renamed or removed it, or needs a login; download the files yourself and choose "Local folder…".`,
      'not-found',
    );
  }
  if (!response.ok) {
    const hint = response.status === 401 || response.status === 403 ? 'the repository needs a login or accepted terms; download the files yourself and choose "Local folder…"' : 'try again later';
    throw new ModelDownloadError(`${spec.name}: downloading ${file.name} from ${url} failed with HTTP ${response.status} ${response.statusText}: ${hint}.`, 'http');
  }
  return response;
}

function networkError(spec: ModelDownloadSpec, name: string, url: string, error: unknown): ModelDownloadError {
  return new ModelDownloadError(
    `${spec.name}: could not download ${name} from ${url} (${errorMessage(error)}). ` +
      'This is likely CORS or being offline: the browser got no usable answer (no connection, or a proxy, firewall or extension blocking huggingface.co). ' +
      'Check the connection and try again, or download the files yourself and choose "Local folder…".',
    'network',
  );
}

/** Reads a body to the end, reporting bytes as they arrive; into one buffer when the length is known. */
async function readBody(response: Response, length: number | null, name: string, url: string, signal: AbortSignal | undefined, onBytes: (loaded: number) => void): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array(await response.arrayBuffer());
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let into = length !== null ? new Uint8Array(length) : null;
  let loaded = 0;
  try {
    for (;;) {
      throwIfAborted(signal);
      const { done, value } = await reader.read();
      if (done) break;
      if (into && loaded + value.length <= into.length) into.set(value, loaded);
      else {
        if (into) chunks.push(into.subarray(0, loaded)); // longer than Content-Length said: collect instead
        into = null;
        chunks.push(value);
      }
      loaded += value.length;
      onBytes(loaded);
    }
  } catch (error) {
    void reader.cancel().catch(() => {});
    if (error instanceof ModelDownloadError) throw error;
    throwIfAborted(signal);
    throw new ModelDownloadError(`the download of ${name} from ${url} broke off after ${formatBytes(loaded)} (${errorMessage(error)}); check the connection and try again.`, 'network');
  }
  if (into) return loaded === into.length ? into : into.subarray(0, loaded);
  const bytes = new Uint8Array(loaded);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/** Stores one file in the cache; a full quota becomes a message with the bytes still needed and the space free. */
async function storeFile(spec: ModelDownloadSpec, storage: ModelStorage, cache: Cache, url: string, bytes: Uint8Array, contentType: string | null): Promise<void> {
  try {
    await cache.put(url, new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': contentType ?? 'application/octet-stream', 'content-length': String(bytes.length) } }));
  } catch (error) {
    if ((error as { name?: string } | null)?.name !== 'QuotaExceededError') throw error;
    let available: number | null = null;
    try {
      const estimate = await storage.estimate?.();
      if (estimate?.quota !== undefined) available = Math.max(0, estimate.quota - (estimate.usage ?? 0));
    } catch {
      // keep "run out"
    }
    throw quotaError(spec, Math.max(bytes.length, spec.downloadBytes), available);
  }
}

function checkConfig(spec: ModelDownloadSpec, bytes: Uint8Array | undefined): void {
  if (!bytes) return;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch (error) {
    throw new ModelDownloadError(`${spec.name}/config.json is not valid JSON (${errorMessage(error)})`, 'config');
  }
  try {
    parseModelConfig(json, `${spec.name}/config.json`);
  } catch (error) {
    throw new ModelDownloadError(`${errorMessage(error)}. TabRL's engine runs Llama, Qwen2 and Qwen3 decoders; choose one of the presets or another such model.`, 'config');
  }
}
