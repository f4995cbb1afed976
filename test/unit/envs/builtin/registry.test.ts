import { describe, expect, test } from 'vitest';
import { ScriptedClient, evaluate, type Task } from '../../../../src/envs/index.ts';
import { BUILTIN_ENVIRONMENTS, BUILTIN_ENVIRONMENT_NAMES, loadBuiltinEnvironment, loadBuiltinExpert } from '../../../../src/envs/builtin/index.ts';
import { createRng, generateTasks } from '../../../../src/envs/builtin/random.ts';

const SMALL = { numTasks: 40, numEvalTasks: 20 };
/** What identifies a task: wordle's prompt is the same for every game, so its answer counts too. */
const key = (task: Task) => `${task.question}|${task.answer}`;

describe('the built-in registry', () => {
  test('lists the six environments', () => {
    expect(BUILTIN_ENVIRONMENT_NAMES).toEqual(['wordle', 'reverse-text', 'countdown', 'arithmetic', 'calculator', 'judged-writing']);
    for (const name of BUILTIN_ENVIRONMENT_NAMES) expect(BUILTIN_ENVIRONMENTS[name].description.length).toBeGreaterThan(10);
  });

  test('an unknown name is refused with the list of known ones', async () => {
    await expect(loadBuiltinEnvironment('wordel')).rejects.toThrow('unknown built-in environment "wordel"; known environments: wordle, reverse-text, countdown, arithmetic, calculator, judged-writing');
    await expect(loadBuiltinEnvironment('constructor')).rejects.toThrow(/unknown built-in environment/);
  });

  describe.each(BUILTIN_ENVIRONMENT_NAMES)('%s', (name) => {
    test('the dataset is the same for a seed, different for another, and the eval set is held out', async () => {
      const a = await loadBuiltinEnvironment(name, { ...SMALL, seed: 1 });
      const b = await loadBuiltinEnvironment(name, { ...SMALL, seed: 1 });
      const c = await loadBuiltinEnvironment(name, { ...SMALL, seed: 2 });
      expect(a.name).toBe(name);
      expect(a.dataset).toHaveLength(SMALL.numTasks);
      expect(a.evalDataset).toHaveLength(SMALL.numEvalTasks);
      expect(b.dataset).toEqual(a.dataset);
      expect(b.evalDataset).toEqual(a.evalDataset);
      expect(c.dataset.map(key)).not.toEqual(a.dataset.map(key));
      const training = new Set(a.dataset.map(key));
      expect(a.evalDataset!.filter((task) => training.has(key(task)))).toEqual([]);
    });

    test('its expert passes 20 held-out tasks', async () => {
      const env = await loadBuiltinEnvironment(name, SMALL);
      const expert = await loadBuiltinExpert(name, env);
      const result = await evaluate(env, new ScriptedClient(expert), { numTasks: 20 });
      expect(result.summary.numRollouts).toBe(20);
      expect(result.summary.rolloutsWithErrors).toBe(0);
      expect(result.summary.passRate).toBe(1);
    });
  });
});

describe('the seeded PRNG', () => {
  test('is reproducible, uniform enough, and keeps to its ranges', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, createRng(seed).next);
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    const rng = createRng(3);
    const counts = [0, 0, 0, 0, 0, 0];
    for (let i = 0; i < 60_000; i++) counts[rng.int(0, 5)]! += 1;
    for (const count of counts) expect(Math.abs(count - 10_000)).toBeLessThan(500);
    expect(rng.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(() => rng.int(3, 2)).toThrow(/bad range/);
    expect(() => rng.pick([])).toThrow(/empty/);
  });

  test('generateTasks skips excluded questions and stops on a small task space', () => {
    const make = (rng: ReturnType<typeof createRng>): Task => ({ question: String(rng.int(1, 5)) });
    const train = generateTasks({ count: 3, seed: 0, make, unique: true });
    expect(new Set(train.map((t) => t.question)).size).toBe(3);
    const held = generateTasks({ count: 10, seed: 1, make, exclude: train });
    expect(held).toHaveLength(2); // only 5 questions exist
    expect(held.some((t) => train.some((u) => u.question === t.question))).toBe(false);
  });
});
