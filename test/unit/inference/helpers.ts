/**
 * Test decoders: a scripted one whose greedy choice is whatever a function of the sequence says
 * (to drive stop strings, stop tokens and multi-turn chats exactly), and a spy that wraps a real
 * decoder and records every prefill and decode call.
 */
import type { Decoder, SequenceId } from '../../../src/gpu/inference/decoder.ts';

/** A Decoder whose logits put +10 on next(tokens so far) and −10 elsewhere; no model involved. */
export class ScriptedDecoder implements Decoder {
  private readonly sequences = new Map<SequenceId, number[]>();
  private nextId = 1;
  readonly calls: Array<{ kind: 'prefill' | 'decode'; rows: number; tokens: number }> = [];

  constructor(
    readonly vocabSize: number,
    private readonly next: (tokens: readonly number[]) => number,
  ) {}

  newSequence(): SequenceId {
    this.sequences.set(this.nextId, []);
    return this.nextId++;
  }
  fork(parent: SequenceId, count: number): SequenceId[] {
    const tokens = this.get(parent);
    return Array.from({ length: count }, () => {
      this.sequences.set(this.nextId, [...tokens]);
      return this.nextId++;
    });
  }
  sequenceLength(seq: SequenceId): number {
    return this.get(seq).length;
  }
  sequenceTokens(seq: SequenceId): number[] {
    return [...this.get(seq)];
  }
  async prefill(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Promise<Float32Array> {
    this.calls.push({ kind: 'prefill', rows: seqs.length, tokens: tokens.reduce((sum, list) => sum + list.length, 0) });
    return this.logits(seqs, tokens);
  }
  async decode(seqs: readonly SequenceId[], tokens: ArrayLike<number>): Promise<Float32Array> {
    this.calls.push({ kind: 'decode', rows: seqs.length, tokens: seqs.length });
    return this.logits(seqs, Array.from(seqs, (_, i) => [tokens[i]!]));
  }
  release(seq: SequenceId): void {
    this.get(seq);
    this.sequences.delete(seq);
  }
  usage(): { sequences: number; tokens: number } {
    return { sequences: this.sequences.size, tokens: [...this.sequences.values()].reduce((sum, t) => sum + t.length, 0) };
  }
  dispose(): void {
    this.sequences.clear();
  }
  private logits(seqs: readonly SequenceId[], tokens: ReadonlyArray<ArrayLike<number>>): Float32Array {
    const V = this.vocabSize;
    const logits = new Float32Array(seqs.length * V).fill(-10);
    seqs.forEach((seq, b) => {
      const sequence = this.get(seq);
      sequence.push(...Array.from(tokens[b]!));
      logits[b * V + this.next(sequence)] = 10;
    });
    return logits;
  }
  private get(seq: SequenceId): number[] {
    const tokens = this.sequences.get(seq);
    if (tokens === undefined) throw new Error(`unknown sequence ${seq}`);
    return tokens;
  }
}

/** Wraps a decoder and records its prefill and decode calls (rows and tokens fed); onDecode runs before each decode step. */
export function spyDecoder(inner: Decoder, onDecode: (step: number) => void = () => {}): Decoder & { calls: Array<{ kind: 'prefill' | 'decode'; rows: number; tokens: number }> } {
  const calls: Array<{ kind: 'prefill' | 'decode'; rows: number; tokens: number }> = [];
  let steps = 0;
  return {
    calls,
    vocabSize: inner.vocabSize,
    newSequence: () => inner.newSequence(),
    fork: (parent, count) => inner.fork(parent, count),
    sequenceLength: (seq) => inner.sequenceLength(seq),
    sequenceTokens: (seq) => inner.sequenceTokens(seq),
    prefill: (seqs, tokens) => {
      calls.push({ kind: 'prefill', rows: seqs.length, tokens: tokens.reduce((sum, list) => sum + list.length, 0) });
      return inner.prefill(seqs, tokens);
    },
    decode: (seqs, tokens) => {
      onDecode(++steps);
      calls.push({ kind: 'decode', rows: seqs.length, tokens: seqs.length });
      return inner.decode(seqs, tokens);
    },
    release: (seq) => inner.release(seq),
    usage: () => inner.usage(),
    dispose: () => inner.dispose(),
  };
}
