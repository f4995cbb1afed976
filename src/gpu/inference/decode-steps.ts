/**
 * Multi-step decoding (`Decoder.decodeSteps`) from single steps: the contract's meaning written once
 * over `decodeAndSample`, for decoders (or model shapes) without a fused multi-step kernel, and the
 * rule both paths share for where a sequence stops.
 */
import type { Decoder, DeviceDecodePlan, DeviceDrawn, SequenceId } from './decoder.ts';

/** Checks a decodeSteps call (lengths, steps, uniforms, draw limits), throwing a message that says what is wrong. */
export function checkDecodeSteps(seqs: readonly SequenceId[], tokens: ArrayLike<number>, plans: readonly DeviceDecodePlan[], steps: number): void {
  if (tokens.length !== seqs.length || plans.length !== seqs.length) throw new Error(`decodeSteps: ${seqs.length} sequences but ${tokens.length} tokens and ${plans.length} plans`);
  if (!Number.isInteger(steps) || steps < 1) throw new Error(`decodeSteps: steps must be a positive integer, got ${steps}`);
  plans.forEach((plan, b) => {
    if (!Number.isInteger(plan.maxDraws) || plan.maxDraws < 1) throw new Error(`decodeSteps: sequence ${b} may make ${plan.maxDraws} draws; at least 1`);
    if (plan.params.temperature !== 0 && plan.uniforms.length < Math.min(steps, plan.maxDraws)) {
      throw new Error(`decodeSteps: sequence ${b} has ${plan.uniforms.length} uniforms for ${Math.min(steps, plan.maxDraws)} draws`);
    }
  });
}

/** Returns whether a sequence that drew `id` as its draw number `made` (1-based) stops there. */
export function stopsAfter(plan: DeviceDecodePlan, id: number, made: number): boolean {
  return made >= plan.maxDraws || plan.stopIds.includes(id);
}

/** decodeSteps as one decodeAndSample call per step over the sequences still going; see Decoder.decodeSteps. */
export async function decodeStepsOneByOne(decoder: Decoder, seqs: readonly SequenceId[], tokens: ArrayLike<number>, plans: readonly DeviceDecodePlan[], steps: number): Promise<DeviceDrawn[]> {
  if (decoder.decodeAndSample === undefined) throw new Error('decodeSteps needs a decoder that samples on its device (decodeAndSample)');
  checkDecodeSteps(seqs, tokens, plans, steps);
  const made = seqs.map(() => ({ ids: [] as number[], logprobs: [] as number[], entropies: [] as number[] }));
  let live = seqs.map((_, b) => b);
  let fed = Array.from(tokens);
  for (let s = 0; s < steps && live.length > 0; s++) {
    const drawn = await decoder.decodeAndSample(
      live.map((b) => seqs[b]!),
      live.map((b) => fed[b]!),
      live.map((b, row) => ({ row, params: plans[b]!.params, uniform: plans[b]!.params.temperature === 0 ? 0 : plans[b]!.uniforms[s]! })),
    );
    live.forEach((b, row) => {
      made[b]!.ids.push(drawn.ids[row]!);
      made[b]!.logprobs.push(drawn.logprobs[row]!);
      made[b]!.entropies.push(drawn.entropies[row]!);
    });
    fed = fed.map((token, b) => (live.includes(b) ? drawn.ids[live.indexOf(b)]! : token));
    live = live.filter((b) => !stopsAfter(plans[b]!, made[b]!.ids.at(-1)!, made[b]!.ids.length));
  }
  return made.map((m) => ({ ids: Int32Array.from(m.ids), logprobs: Float32Array.from(m.logprobs), entropies: Float32Array.from(m.entropies) }));
}
