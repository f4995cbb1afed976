/**
 * Remembers the decode-path trial's verdict (decode-path-trial.ts; the WebGPU decoder's
 * `decodePath: 'auto'`) so that it runs once per adapter, model shape, batch bucket and fused-kernel
 * layout: in the process (later decoders and calls) and, given a TuningStore (the engine worker's
 * IndexedDB), across visits: on SwiftShader a trial costs ~1.5 s per batch bucket on the tiny model
 * and several seconds on larger ones, paid before the first sampling. A stored verdict counts only
 * under the same key and `decodePathVersion` (the trial's procedure and a hash of the forward
 * kernels' WGSL); anything else is ignored, tried again and overwritten, and a store that fails or
 * stalls costs only a trial (tuning-cache.ts, shared with the matmul choice).
 */
import type { ModelConfig } from '../model/config.ts';
import type { AdapterDescription } from './device.ts';
import type { DecodePath, PathTrialResult } from './decode-path-trial.ts';
import { WGSL } from './kernels.generated.ts';
import { adapterKey } from './matmul-variants.ts';
import { fnv1a, kernelSources, storedOrMeasured, type TuningKind } from './tuning-cache.ts';
import type { TuningStore } from './tuning-store.ts';

/**
 * Bump when the trial changes how it decides (decode-path-trial.ts's defaults and stopping rule, the
 * decoder's timed run, the fused kernel's default layout), so that verdicts stored before are tried
 * again. Kernel edits need no bump: their source is part of `decodePathVersion`.
 */
const TRIAL_PROCEDURE_VERSION = 1;

/** What decides a trial besides the adapter: the model's shape, the batch bucket and the fused kernel's layout. */
export interface DecodePathKey {
  config: ModelConfig;
  /** The batch bucket (a power of two). */
  bucket: number;
  /** Threads per sequence of the fused kernel. */
  fusedWorkgroupSize: number;
  /** Sequences per workgroup of the fused kernel, or 'auto' for the decoder's choice per bucket. */
  fusedSequences: number | 'auto';
}

/** A path and, when this process timed it, the trial (null when it came from the store). */
export interface ResolvedDecodePath {
  path: DecodePath;
  trial: PathTrialResult | null;
}

const IN_PROCESS = new Map<string, Promise<ResolvedDecodePath | null>>();
let version: string | undefined;

/** The version a stored verdict must match: the trial's procedure version and a hash of every kernel but the training-only ones (both paths' forward kernels, the matmul variants the layered path runs). */
export function decodePathVersion(): string {
  const trainingOnly = (name: string): boolean => name.includes('_backward') || name.startsWith('adamw') || name.startsWith('global_grad_norm');
  version ??= `${TRIAL_PROCEDURE_VERSION}-${fnv1a(kernelSources(WGSL, (name) => !trainingOnly(name)))}`;
  return version;
}

/** The verdict in a TuningStore: `{ version, path }` under 'decode-path:' + the adapter and trial key. */
const DECODE_PATH: TuningKind<DecodePath> = {
  prefix: 'decode-path:',
  version: decodePathVersion,
  parse: ({ path }) => (path === 'fused' || path === 'layered' ? path : null),
  fields: (path) => ({ path }),
  subject: 'The decode path choice',
  measuring: 'the timed trial',
};

/** The store key (after the prefix) of a trial on `adapter`: the adapter, the model's shape and flags, the bucket and the fused layout. */
export function decodePathKey(adapter: AdapterDescription, { config, bucket, fusedWorkgroupSize, fusedSequences }: DecodePathKey): string {
  const { hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, vocab_size } = config;
  const shape = [hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, vocab_size].join('x');
  const flags = (['tie_word_embeddings', 'attention_bias', 'attention_output_bias', 'qk_norm'] as const).map((flag) => (config[flag] ? '1' : '0')).join('');
  return `${adapterKey(adapter)}|${shape}|${flags}|B${bucket}|wg${fusedWorkgroupSize}|seq${fusedSequences}`;
}

/**
 * The path for `key` on `adapter`: remembered in the process, read from `store`, or `trial`'s verdict
 * (then remembered in both). Concurrent calls for one key share one trial. Settles to null when the
 * trial fails (nothing is stored; the caller decodes layered); never rejects.
 */
export function resolveDecodePath(adapter: AdapterDescription, store: TuningStore | undefined, key: DecodePathKey, trial: () => Promise<PathTrialResult>): Promise<ResolvedDecodePath | null> {
  const id = decodePathKey(adapter, key);
  let resolved = IN_PROCESS.get(id);
  if (resolved === undefined) {
    let timed: PathTrialResult | null = null;
    const measure = async (): Promise<DecodePath> => {
      timed = await trial();
      return timed.path;
    };
    resolved = storedOrMeasured(store, DECODE_PATH, id, measure).then(
      ({ value }) => ({ path: value, trial: timed }),
      () => null,
    );
    IN_PROCESS.set(id, resolved);
  }
  return resolved;
}

/** Forgets the verdicts remembered in this process (tests: a fresh process, as on a later visit); a store keeps its own. */
export function clearDecodePathCache(): void {
  IN_PROCESS.clear();
}
