/**
 * The engine's fetch of a shipped model (src/workers/engine/shipped-model.ts) over the real folders
 * in public/models, served by a fake fetch: every shipped model loads with its own shapes, and a
 * folder that is missing, answered by a single-page server's web page, truncated, of another model
 * or holding a NaN is refused with a message that names the model and says what to do.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { parseSafetensors, serializeSafetensors } from '../../../src/gpu/io/safetensors.ts';
import { SHIPPED_MODELS } from '../../../src/models/shipped-models.ts';
import { fetchShippedModel } from '../../../src/workers/engine/shipped-model.ts';

const MODELS_FOLDER = fileURLToPath(new URL('../../../public/models', import.meta.url));
const BASE_URL = 'http://127.0.0.1:4173/app/';

/** A fake server of the app's files under /app/: `files` maps a path ("models/nano/config.json") to its bytes; anything else is 404, or index.html when `spa`. */
function fakeServer(files: Map<string, Uint8Array>, options: { spa?: boolean } = {}) {
  const requested: string[] = [];
  const fetch = async (input: URL) => {
    const path = input.pathname.replace(/^\/app\//, '');
    requested.push(path);
    const bytes = files.get(path);
    if (bytes) return new Response(bytes.slice().buffer as ArrayBuffer, { headers: { 'content-type': path.endsWith('.json') ? 'application/json' : 'application/octet-stream' } });
    if (options.spa) return new Response('<!doctype html><title>TabRL</title>', { headers: { 'content-type': 'text/html' } });
    return new Response('not found', { status: 404 });
  };
  return { fetch, requested };
}

/** The shipped folder of `id` as the server holds it: config.json and model.safetensors. */
async function shippedFiles(id: string, folder = id): Promise<Map<string, Uint8Array>> {
  const read = async (name: string) => new Uint8Array(await readFile(join(MODELS_FOLDER, id, name)));
  return new Map([
    [`models/${folder}/config.json`, await read('config.json')],
    [`models/${folder}/model.safetensors`, await read('model.safetensors')],
  ]);
}

const signal = new AbortController().signal;
const WHAT_TO_DO = /Choose another model in the Policy card; whoever runs this app should restore public\/models\/nano-2m/;

describe.each(SHIPPED_MODELS.map((model) => [model.id, model] as const))('fetching the shipped %s', (id, shipped) => {
  test('loads its config and weights from its own folder, relative to the app', async () => {
    const server = fakeServer(await shippedFiles(id));
    const loaded = await fetchShippedModel(id, `models/${id}/`, { baseUrl: BASE_URL, signal, fetch: server.fetch });
    expect(loaded).toMatchObject({ id, url: `models/${id}/`, config: shipped.config });
    expect([...new Set(server.requested)].sort()).toEqual([`models/${id}/config.json`, `models/${id}/model.safetensors`]);
    expect(loaded.tensors.size).toBeGreaterThan(0);
  });
});

describe('a broken nano-2m folder is refused, naming the model and what to do', () => {
  test('a missing file (HTTP 404), and a single-page server\'s web page in its place', async () => {
    const files = await shippedFiles('nano-2m');
    files.delete('models/nano-2m/model.safetensors');
    const options = { baseUrl: BASE_URL, signal };
    await expect(fetchShippedModel('nano-2m', 'models/nano-2m/', { ...options, fetch: fakeServer(files).fetch })).rejects.toThrow(
      /^nano-2m: model\.safetensors could not be fetched \(HTTP 404\): the app's models\/nano-2m folder is missing\. Choose another model/,
    );
    await expect(fetchShippedModel('nano-2m', 'models/nano-2m/', { ...options, fetch: fakeServer(new Map(), { spa: true }).fetch })).rejects.toThrow(
      /^nano-2m: config\.json could not be fetched \(the server answered with a web page\): the app's models\/nano-2m folder is missing/,
    );
    await expect(fetchShippedModel('nano-2m', 'models/nano-2m/', { ...options, fetch: fakeServer(new Map()).fetch })).rejects.toThrow(WHAT_TO_DO);
  });

  test('truncated weights, another model\'s config and weights, and a NaN', async () => {
    const options = { baseUrl: BASE_URL, signal };
    const truncated = await shippedFiles('nano-2m');
    truncated.set('models/nano-2m/model.safetensors', truncated.get('models/nano-2m/model.safetensors')!.slice(0, 100_000));
    await expect(fetchShippedModel('nano-2m', 'models/nano-2m/', { ...options, fetch: fakeServer(truncated).fetch })).rejects.toThrow(/^nano-2m: the app's models\/nano-2m folder is damaged \(nano-2m\/model\.safetensors.*\)\. Choose another model/s);

    // nano's files where nano-2m's should be: a valid folder, but not nano-2m's shapes
    const swapped = await shippedFiles('nano', 'nano-2m');
    await expect(fetchShippedModel('nano-2m', 'models/nano-2m/', { ...options, fetch: fakeServer(swapped).fetch })).rejects.toThrow(
      /^nano-2m: the app's models\/nano-2m folder is damaged \(its config\.json describes another model: hidden_size 96, not 192; .*num_hidden_layers 3, not 6.*\)/,
    );

    const poisoned = await shippedFiles('nano-2m');
    const { tensors } = parseSafetensors(poisoned.get('models/nano-2m/model.safetensors')!);
    tensors.get('model.norm.weight')!.data[3] = Number.NaN;
    poisoned.set('models/nano-2m/model.safetensors', serializeSafetensors(tensors));
    await expect(fetchShippedModel('nano-2m', 'models/nano-2m/', { ...options, fetch: fakeServer(poisoned).fetch })).rejects.toThrow(/^nano-2m: .*damaged \(tensor model\.norm\.weight holds a NaN or an infinity\)\. Choose another model/);
  });

  test('an id the app does not ship is refused before anything is fetched', async () => {
    const server = fakeServer(await shippedFiles('nano-2m'));
    await expect(fetchShippedModel('nano-3m', 'models/nano-2m/', { baseUrl: BASE_URL, signal, fetch: server.fetch })).rejects.toThrow(`"nano-3m" is not a model this app ships (it ships ${SHIPPED_MODELS.map((model) => model.id).join(', ')})`);
    expect(server.requested).toEqual([]);
  });
});
