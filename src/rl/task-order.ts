/**
 * Which examples a training step uses: a dataset is walked in a seeded shuffled order, one fresh
 * permutation per epoch. The order is a pure function of (seed, step), so a resumed run picks the
 * same tasks as an uninterrupted one without storing any generator state.
 */
import { createRng } from '../envs/builtin/random.ts';

/** Dataset indices at positions [start, start + count) of the seeded epoch-by-epoch shuffle of `datasetSize` items. */
export function shuffledIndices(start: number, count: number, datasetSize: number, seed: number): number[] {
  if (datasetSize < 1) throw new Error('shuffledIndices: the dataset is empty');
  const permutations = new Map<number, number[]>();
  const permutation = (epoch: number): number[] => {
    let order = permutations.get(epoch);
    if (!order) {
      order = createRng(seed * 1_000_003 + epoch).shuffle(Array.from({ length: datasetSize }, (_, i) => i));
      permutations.set(epoch, order);
    }
    return order;
  };
  return Array.from({ length: count }, (_, j) => {
    const position = start + j;
    return permutation(Math.floor(position / datasetSize))[position % datasetSize]!;
  });
}

/** The dataset indices of the `count` tasks of 0-based `step`. */
export function taskIndicesForStep(step: number, count: number, datasetSize: number, seed: number): number[] {
  return shuffledIndices(step * count, count, datasetSize, seed);
}

/**
 * The extra tasks dynamic sampling may draw for 0-based `step`, in draw order: positions
 * [step·maxExtra, (step + 1)·maxExtra) of a second seeded shuffle, apart from the regular order, so
 * a step's extra tasks are a pure function of (seed, step) and never shift the tasks of later steps.
 */
export function extraTaskIndicesForStep(step: number, maxExtra: number, datasetSize: number, seed: number): number[] {
  return shuffledIndices(step * maxExtra, maxExtra, datasetSize, seed + 0x5eed);
}
