import { describe, expect, test } from 'vitest';
import { ScriptedClient, evaluate, type Task } from '../../../../src/envs/index.ts';
import loadWordle from '../../../../src/envs/builtin/wordle.ts';
import {
  COMPACT_ANSWER_POOL,
  COMPACT_DICTIONARY,
  COMPACT_HELD_OUT,
  COMPACT_PRACTICE,
  boardFacts,
  compactAnswerPool,
  compactPoolOf,
  compactWordleTeacher,
  fitsBoard,
  parseBoard,
  renderBoard,
  type CompactWordleState,
} from '../../../../src/envs/builtin/wordle-compact.ts';
import { scoreGuess } from '../../../../src/envs/builtin/wordle-rules.ts';
import { WORDLE_ANSWERS } from '../../../../src/envs/builtin/data/wordle-words.ts';
import { createRng } from '../../../../src/envs/builtin/random.ts';
import { loadBuiltinEnvironment, loadBuiltinExpert } from '../../../../src/envs/builtin/index.ts';
import { makeWarmupData } from '../../../../src/rl/sft-data.ts';

const env = loadWordle({ compact: true, numTasks: 50 });
const task = (answer: string): Task => ({ question: env.dataset[0]!.question, answer, task: 'wordle' });
const play = async (answer: string, replies: string[]) => {
  const trajectory = await env.rollout(new ScriptedClient(replies), task(answer));
  const userMessages = trajectory.completion.filter((message) => message.role === 'user').map((message) => message.content);
  return { trajectory, state: trajectory.state as CompactWordleState, userMessages };
};
const board = (secret: string, guesses: string[]) => renderBoard(boardFacts(guesses, guesses.map((guess) => scoreGuess(guess, secret))));

describe('compact wordle board', () => {
  test('the opening board knows nothing', () => {
    expect(env.dataset[0]!.question).toBe('????? + -');
    expect(env.systemPrompt).toBeUndefined();
  });

  test('greens in place, unplaced letters after +, excluded letters after -', () => {
    expect(board('crane', ['slate'])).toBe('??a?e + -lst'); // a and e green; s, l, t absent
    expect(board('crane', ['react'])).toBe('??a?? +cer -t'); // a green; r, e, c yellow (alphabetical); t absent
  });

  test('repeated letters: a second copy is listed, a gray copy of a present letter is not excluded', () => {
    // speed vs geese: s Y, p X, e G, e Y, d X → e placed once and known twice, so one e is unplaced, and s.
    expect(board('geese', ['speed'])).toBe('??e?? +es -dp');
    // eerie vs crane: only the last e is green; the other e's are gray but e is in the word, so not excluded.
    expect(board('crane', ['eerie'])).toBe('????e +r -i');
    // abbey vs babes: a Y, b Y, b G, e G, y X → b known twice, one placed, so b is listed once more.
    expect(board('babes', ['abbey'])).toBe('??be? +ab -y');
  });

  test('a guess fits the board only if it keeps the greens, the known letters (with counts) and avoids excluded letters', () => {
    const facts = boardFacts(['speed'], [scoreGuess('speed', 'geese')]);
    expect(fitsBoard('geese', facts)).toBe(true);
    expect(fitsBoard('treed', facts)).toBe(false); // d excluded
    expect(fitsBoard('there', facts)).toBe(false); // e not at position 3
    expect(fitsBoard('sleek', facts)).toBe(true);
    expect(fitsBoard('obeys', facts)).toBe(false); // only one e, and s excluded
  });

  test('a board line parses back into the same facts', () => {
    for (const [secret, guesses] of [['geese', ['speed']], ['crane', ['eerie', 'slate']], ['babes', ['abbey']]] as const) {
      const text = board(secret, [...guesses]);
      expect(renderBoard(parseBoard(text)!)).toBe(text);
    }
    expect(parseBoard('won in 3')).toBeUndefined();
  });
});

describe('compact wordle game and rewards', () => {
  test('a game shows the board after each guess and ends on a win', async () => {
    const { state, userMessages, trajectory } = await play('crane', ['slate', 'crane']);
    expect(userMessages).toEqual(['??a?e + -lst', 'won in 2']);
    expect(state.won).toBe(true);
    expect(trajectory.scores.compactWinReward).toBe(1);
    expect(trajectory.scores.fewerTurnsReward).toBeCloseTo(5 / 6);
    expect(trajectory.scores.validWordsReward).toBe(1);
    expect(trajectory.scores.consistencyReward).toBe(1); // crane fits "??a?e + -lst"
    expect(trajectory.reward).toBeCloseTo(1 + 0.5 * (5 / 6) + 0.2 + 0.3);
  });

  test('invalid moves do not use a guess, lower the valid-word reward, and two in a row end the game', async () => {
    const { state, userMessages, trajectory } = await play('crane', ['slate', 'xxxxx', 'slate', 'qqqqq']);
    expect(userMessages[1]).toBe('not a word; ??a?e + -lst');
    expect(userMessages[2]).toBe('already guessed; lost: crane');
    expect(state.guesses).toEqual(['slate']);
    expect(state.invalidGuesses).toBe(2);
    expect(trajectory.scores.validWordsReward).toBeCloseTo(1 / 3);
    expect(trajectory.scores.compactWinReward).toBe(0);
    expect(trajectory.reward).toBeLessThan(env.passThreshold);
  });

  test("the dictionary is the game's own 300-word list: an English word outside it is not a word", async () => {
    expect(COMPACT_DICTIONARY.size).toBe(COMPACT_ANSWER_POOL.all.length);
    expect(COMPACT_ANSWER_POOL.all.every((word) => COMPACT_DICTIONARY.has(word))).toBe(true);
    expect(COMPACT_DICTIONARY.has('pious')).toBe(false); // a Wordle guess, but not in the compact list
    const { userMessages, state, trajectory } = await play('crane', ['pious', 'crane']);
    expect(userMessages[0]).toBe('not a word; ????? + -');
    expect(state.won).toBe(true);
    expect(trajectory.scores.validWordsReward).toBeCloseTo(1 / 2);
  });

  test('a guess that ignores the board counts against consistency', async () => {
    // after slate on crane, "those" keeps the green e but uses the excluded t and s
    const { trajectory } = await play('crane', ['slate', 'those', 'crane']);
    expect(trajectory.scores.consistencyReward).toBeCloseTo(1 / 2); // of the informed guesses, crane fits and those does not
    expect(trajectory.scores.fewerTurnsReward).toBeCloseTo(4 / 6);
  });

  test('the opening guess earns no consistency: giving up after it scores less than playing on with fitting guesses', async () => {
    const quit = await play('crane', ['slate', 'xxxxx', 'qqqqq']);
    expect(quit.state.gameOver).toBe(true);
    expect(quit.trajectory.scores.consistencyReward).toBe(0);
    // valid guesses on 'crane' that all fit their boards (as long as a word other than crane fits), then the same two invalid moves
    const facts = (guesses: string[]) => boardFacts(guesses, guesses.map((guess) => scoreGuess(guess, 'crane')));
    const guesses = ['slate'];
    for (;;) {
      const next = COMPACT_ANSWER_POOL.all.find((word) => word !== 'crane' && !guesses.includes(word) && fitsBoard(word, facts(guesses)));
      if (next === undefined || guesses.length === 5) break;
      guesses.push(next);
    }
    expect(guesses.length).toBeGreaterThan(1);
    const played = await play('crane', [...guesses, 'xxxxx', 'qqqqq']);
    expect(played.state.won).toBe(false);
    expect(played.trajectory.scores.consistentGuessesMetric).toBe(1); // every informed guess it made fitted
    expect(played.trajectory.scores.consistencyReward).toBeCloseTo((guesses.length - 1) / 5); // a lost game: of all five informed turns
    expect(played.trajectory.reward).toBeGreaterThan(quit.trajectory.reward);
    expect(played.trajectory.reward).toBeLessThan(env.passThreshold);
  });

  test('no forfeit pays more than playing on: giving up after consistent guesses scores less than the same start played on to a loss', async () => {
    // slate, then a guess that fits its board, then two invalid moves: the game is forfeited.
    const facts = (guesses: string[]) => boardFacts(guesses, guesses.map((guess) => scoreGuess(guess, 'crane')));
    const fitting = COMPACT_ANSWER_POOL.all.find((word) => word !== 'crane' && word !== 'slate' && fitsBoard(word, facts(['slate'])))!;
    const start = ['slate', fitting];
    const quit = await play('crane', [...start, 'xxxxx', 'qqqqq']);
    expect(quit.state.gameOver).toBe(true);
    expect(quit.state.guesses).toEqual(start);
    // The same start played on with the worst continuation: four valid guesses that fit no board, to a loss.
    const careless = COMPACT_ANSWER_POOL.all.filter((word) => word !== 'crane' && !start.includes(word) && !fitsBoard(word, facts(start))).slice(0, 4);
    const played = await play('crane', [...start, ...careless]);
    expect(played.state.won).toBe(false);
    expect(played.state.guesses.length).toBe(6);
    expect(played.state.consistentGuesses).toBe(1); // only the start's fitting guess (the careless ones fit no board of theirs either)
    // A lost game's consistency counts every informed turn it had (5): turns forfeited count as inconsistent.
    expect(quit.trajectory.scores.consistencyReward).toBeCloseTo(1 / 5);
    expect(played.trajectory.scores.consistencyReward).toBeCloseTo(1 / 5);
    expect(played.trajectory.reward).toBeGreaterThan(quit.trajectory.reward);
  });

  test('on random games, a forfeit never scores more than any valid continuation to a loss', async () => {
    const rng = createRng(7);
    let teacherLike = 0;
    for (let game = 0; game < 60; game++) {
      const secret = rng.pick(COMPACT_ANSWER_POOL.all);
      const others = rng.shuffle(COMPACT_ANSWER_POOL.all.filter((word) => word !== secret));
      const start = others.slice(0, 1 + Math.floor(rng.next() * 5)); // 1–5 valid misses
      // half the starts made of guesses that fit their boards, as a lucky or careful player's would be
      if (game % 2 === 0) {
        const facts = (guesses: string[]) => boardFacts(guesses, guesses.map((guess) => scoreGuess(guess, secret)));
        for (let i = 1; i < start.length; i++) {
          const fitting = others.find((word) => !start.slice(0, i).includes(word) && fitsBoard(word, facts(start.slice(0, i))));
          if (fitting !== undefined) start[i] = fitting;
        }
        teacherLike++;
      }
      if (new Set(start).size !== start.length) continue;
      const quit = await play(secret, [...start, 'xxxxx', 'qqqqq']);
      const rest = others.filter((word) => !start.includes(word)).slice(0, 6 - start.length);
      const played = await play(secret, [...start, ...rest]);
      expect(played.state.won).toBe(false);
      expect(played.trajectory.reward).toBeGreaterThan(quit.trajectory.reward);
    }
    expect(teacherLike).toBeGreaterThan(0);
  });

  test('turn rewards (turnRewards: true) score every move: valid 0.2, fits its board 0.3; off by default', async () => {
    expect((await play('crane', ['slate', 'crane'])).trajectory.turnRewards).toBeUndefined();
    const scored = loadWordle({ compact: true, numTasks: 5, turnRewards: true });
    // crane: slate (the opening fits an empty board) · xxxxx (not a word) · those (valid, uses the excluded s and t) · piper (valid, misses the green a) · crane (fits, wins)
    const trajectory = await scored.rollout(new ScriptedClient(['slate', 'xxxxx', 'those', 'piper', 'crane']), task('crane'));
    const state = trajectory.state as CompactWordleState;
    expect(state.moves).toEqual(['fits', 'invalid', 'misfit', 'misfit', 'fits']);
    expect(trajectory.turnRewards).toEqual([0.5, 0, 0.2, 0.2, 0.5].map((x) => expect.closeTo(x, 12)));
    expect(trajectory.scores.validMoveTurnReward).toBeCloseTo(4 / 5);
    expect(trajectory.scores.fitsBoardTurnReward).toBeCloseTo(2 / 5);
    // The outcome reward is the same with or without turn rewards.
    const plain = await env.rollout(new ScriptedClient(['slate', 'xxxxx', 'those', 'piper', 'crane']), task('crane'));
    expect(trajectory.reward).toBeCloseTo(plain.reward);
    expect(() => loadWordle({ compact: true, turnRewards: 'yes' as never })).toThrow('turnRewards must be true or false');
  });

  test('rewardWeights changes some weights by name; a won game passes whatever they are; unknown names and non-numbers are refused', async () => {
    const movesOnly = loadWordle({ compact: true, numTasks: 5, turnRewards: true, rewardWeights: { win: 0, fewerTurns: 0, fitsBoard: 1 } });
    const won = await movesOnly.rollout(new ScriptedClient(['slate', 'crane']), task('crane'));
    expect(won.reward).toBeCloseTo(0.2 + 0.3); // valid words and consistency only
    expect(won.turnRewards).toEqual([1.2, 1.2].map((x) => expect.closeTo(x, 12)));
    expect(movesOnly.isPassed(won)).toBe(true);
    const lost = await movesOnly.rollout(new ScriptedClient(['slate', 'xxxxx', 'qqqqq']), task('crane'));
    expect(movesOnly.isPassed(lost)).toBe(false);
    expect(() => loadWordle({ compact: true, rewardWeights: { winning: 1 } as never })).toThrow('rewardWeights has no reward "winning"; the names are win, fewerTurns, validWords, consistency, validMove, fitsBoard');
    expect(() => loadWordle({ compact: true, rewardWeights: { win: '1' } as never })).toThrow('the weight of win must be a finite number, got "1"');
  });

  test('repeated letters in turn rewards: a guess with one copy of a letter the board knows twice does not fit', async () => {
    const scored = loadWordle({ compact: true, numTasks: 5, turnRewards: true });
    // meter on greed: the e at 4 is green, the e at 2 yellow, so the word has two e's.
    expect(board('greed', ['meter'])).toBe('???e? +er -mt');
    // piper keeps the green e and the r but has one e; elder has both.
    const trajectory = await scored.rollout(new ScriptedClient(['meter', 'piper', 'elder', 'greed']), task('greed'));
    expect((trajectory.state as CompactWordleState).moves).toEqual(['fits', 'misfit', 'fits', 'fits']);
    expect(trajectory.turnRewards).toEqual([0.5, 0.2, 0.5, 0.5].map((x) => expect.closeTo(x, 12)));
  });

  test('a first-guess win is fully consistent', async () => {
    const { trajectory } = await play('crane', ['crane']);
    expect(trajectory.scores.consistencyReward).toBe(1);
    expect(trajectory.reward).toBeCloseTo(1 + 0.5 + 0.2 + 0.3);
  });

  test('six valid misses lose, and a loss scores below the pass threshold', async () => {
    const { state, userMessages, trajectory } = await play('crane', ['slate', 'those', 'orbit', 'sulky', 'macaw', 'bacon']);
    expect(state.won).toBe(false);
    expect(userMessages.at(-1)).toBe('lost: crane');
    expect(trajectory.reward).toBeLessThan(env.passThreshold);
  });
});

describe('compact wordle answers and teacher', () => {
  test('held-out answers are evaluation answers only, never training answers', () => {
    const heldOut = new Set(COMPACT_ANSWER_POOL.heldOut);
    expect(heldOut.size).toBe(COMPACT_HELD_OUT);
    for (const answers of ['practice', 'demonstration', 'training', 'practice-and-demonstration'] as const) {
      const full = loadWordle({ compact: true, numTasks: 1000, answers, evalSplit: 'held-out' });
      expect(full.dataset.every((t) => !heldOut.has(t.answer!))).toBe(true);
      expect(full.demonstrationTasks.every((t) => !heldOut.has(t.answer!))).toBe(true);
      expect(full.evaluationTasks.length).toBe(COMPACT_HELD_OUT);
      expect(full.evaluationTasks.every((t) => heldOut.has(t.answer!))).toBe(true);
    }
  });

  test('the pool splits three ways, and by default RL plays practice answers while demonstrations use the others', () => {
    const { heldOut, practice, demonstration, training, all } = COMPACT_ANSWER_POOL;
    expect(practice.length).toBe(COMPACT_PRACTICE);
    expect(new Set([...heldOut, ...practice, ...demonstration]).size).toBe(all.length); // disjoint and covering
    expect([...training].sort()).toEqual([...practice, ...demonstration].sort());
    const lesson = loadWordle({ compact: true, numTasks: 1000 });
    const answersOf = (tasks: readonly Task[]) => new Set(tasks.map((t) => t.answer as string));
    expect(answersOf(lesson.dataset)).toEqual(new Set(practice)); // 1000 games cycle through all 100
    expect(answersOf(lesson.demonstrationTasks)).toEqual(new Set(demonstration));
    const pretraining = loadWordle({ compact: true, numTasks: 300, answers: 'demonstration' });
    expect(answersOf(pretraining.dataset)).toEqual(new Set(demonstration));
    expect(answersOf(pretraining.demonstrationTasks)).toEqual(new Set(demonstration));
    const both = loadWordle({ compact: true, numTasks: 1000, answers: 'practice-and-demonstration' });
    expect(answersOf(both.dataset)).toEqual(new Set(training)); // RL plays both sets…
    expect(answersOf(both.demonstrationTasks)).toEqual(new Set(demonstration)); // …demonstrations stay on one
    expect(() => loadWordle({ compact: true, answers: 'held-out' as 'practice' })).toThrow(/answers must be training, practice, demonstration or practice-and-demonstration/);
  });

  test('warm-up demonstrations are made on the demonstration answers, not the RL ones', async () => {
    const lesson = await loadBuiltinEnvironment('wordle', { compact: true, numTasks: 40 });
    const data = await makeWarmupData(lesson, new ScriptedClient(await loadBuiltinExpert('wordle', lesson)), { numTasks: 40 });
    expect(data.rollouts).toBe(40);
    const practice = new Set(COMPACT_ANSWER_POOL.practice);
    const demonstration = new Set(COMPACT_ANSWER_POOL.demonstration);
    for (const example of data.examples) {
      const won = example.messages.find((m) => m.role === 'user' && m.content.startsWith('won'));
      expect(won).toBeDefined();
      const guesses = example.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
      expect(demonstration.has(guesses.at(-1)!)).toBe(true); // the winning guess is the answer
      expect(practice.has(guesses.at(-1)!)).toBe(false);
    }
  });

  test('the teacher fits the board on most moves but not all, and wins most games', async () => {
    const wordle = await loadBuiltinEnvironment('wordle', { compact: true, numTasks: 200 });
    const teacher = await loadBuiltinExpert('wordle', wordle);
    const result = await evaluate(wordle, new ScriptedClient(teacher), { tasks: wordle.dataset });
    expect(result.summary.passRate).toBeGreaterThan(0.85);
    expect(result.summary.scores.consistencyReward).toBeGreaterThan(0.7);
    expect(result.summary.scores.consistencyReward).toBeLessThan(0.98); // deliberately imperfect
    expect(result.summary.scores.validWordsReward).toBe(1);
  });

  test('the teacher is deterministic for a transcript, and never careless with mistakeRate 0', async () => {
    const careful = compactWordleTeacher(0);
    const messages = [
      { role: 'user' as const, content: '????? + -' },
      { role: 'assistant' as const, content: 'slate' },
      { role: 'user' as const, content: '??a?e + -lst' },
    ];
    const request = { model: 'x', messages };
    const first = await careful(messages, request);
    expect(await careful(messages, request)).toBe(first);
    expect(fitsBoard(String(first), parseBoard('??a?e + -lst')!)).toBe(true);
  });

  // Twelve games on each of two answers, the same tasks as pretraining makes (game i numbered seed + i).
  const repeatedGames: Task[] = ['crane', 'teach'].flatMap((answer) => Array.from({ length: 12 }, (_, i) => ({ question: '????? + -', answer, task: 'wordle', info: { gameSeed: i } })));
  const gamesOf = async (seedBy: 'transcript' | 'game', seed: number) => {
    const result = await evaluate(env, new ScriptedClient(compactWordleTeacher(undefined, COMPACT_ANSWER_POOL, seedBy)), { tasks: repeatedGames, samplingArgs: { seed } });
    return result.records.map((record) => `${String(record.answer)}: ${record.completion.map((message) => message.content).join(' | ')}`);
  };
  const distinctPerAnswer = (games: string[], answer: string) => new Set(games.filter((game) => game.startsWith(`${answer}:`))).size;

  test("a teacher seeded by the game plays an answer's games differently, and the same seed replays the same games", async () => {
    const games = await gamesOf('game', 7);
    expect(distinctPerAnswer(games, 'crane')).toBeGreaterThan(6);
    expect(distinctPerAnswer(games, 'teach')).toBeGreaterThan(6);
    expect(await gamesOf('game', 7)).toEqual(games);
    expect(await gamesOf('game', 1007)).not.toEqual(games);
  });

  test('the transcript-seeded teacher (the default) plays one game per answer, whatever the seed', async () => {
    const games = await gamesOf('transcript', 7);
    expect(distinctPerAnswer(games, 'crane')).toBe(1);
    expect(distinctPerAnswer(games, 'teach')).toBe(1);
    expect(await gamesOf('transcript', 1007)).toEqual(games);
    const byDefault = await evaluate(env, new ScriptedClient(compactWordleTeacher()), { tasks: repeatedGames });
    expect(byDefault.records.map((record) => `${String(record.answer)}: ${record.completion.map((message) => message.content).join(' | ')}`)).toEqual(games);
  });

  test('a teacher seeded by the game refuses a request without a seed, saying what to pass', async () => {
    const result = await evaluate(env, new ScriptedClient(compactWordleTeacher(undefined, COMPACT_ANSWER_POOL, 'game')), { tasks: repeatedGames.slice(0, 1) });
    expect(result.records[0]!.errors[0]!.message).toMatch(/needs a seed in each request; pass samplingArgs with a seed/);
  });
});

describe('compact wordle evaluation splits', () => {
  const seedOf = (t: Task) => t.info!.gameSeed as number;

  test('by default the evaluation games are fresh games from the whole answer pool, seeded apart from every training game', () => {
    for (const poolSize of [300, 2000]) {
      const game = loadWordle({ compact: true, numTasks: 1000, poolSize });
      const pool = compactPoolOf(game)!;
      expect(game.evaluationTasks).toHaveLength(100);
      const all = new Set(pool.all);
      expect(game.evaluationTasks.every((t) => all.has(t.answer!))).toBe(true);
      // Drawn from the whole pool, not from one split: the 100 games reach held-out and training answers alike.
      const heldOut = new Set(pool.heldOut);
      const fromHeldOut = game.evaluationTasks.filter((t) => heldOut.has(t.answer!)).length;
      expect(fromHeldOut).toBeGreaterThan(poolSize === 300 ? 15 : 0);
      expect(fromHeldOut).toBeLessThan(poolSize === 300 ? 55 : 20);
      const trainingSeeds = new Set([...game.dataset, ...game.demonstrationTasks].map(seedOf));
      expect(trainingSeeds.size).toBe(1000);
      const evalSeeds = game.evaluationTasks.map(seedOf);
      expect(new Set(evalSeeds).size).toBe(100);
      expect(evalSeeds.some((s) => trainingSeeds.has(s))).toBe(false);
    }
  });

  test('fresh games: an answer may recur, each game is its own seed, and more games than words is allowed', () => {
    const game = loadWordle({ compact: true, numEvalTasks: 1000, evalSeed: 5_000 });
    const answers = game.evaluationTasks.map((t) => t.answer!);
    expect(answers).toHaveLength(1000);
    expect(new Set(answers).size).toBeLessThan(300); // recurring answers
    expect(new Set(answers).size).toBeGreaterThan(250); // yet nearly every word of the pool turns up
    expect(game.evaluationTasks.map(seedOf)).toEqual(Array.from({ length: 1000 }, (_, i) => 5_000 + i));
    // A game's answer depends on its seed alone: the first 100 games of 1000 are the 100 games of 100.
    expect(loadWordle({ compact: true, evalSeed: 5_000 }).evaluationTasks).toEqual(game.evaluationTasks.slice(0, 100));
    expect(loadWordle({ compact: true, evalSeed: 5_001 }).evaluationTasks.map((t) => t.answer)).not.toEqual(answers.slice(0, 100));
  });

  test('evaluation seeds that overlap the training games are refused, with the ranges in the message', () => {
    expect(() => loadWordle({ compact: true, numTasks: 1000, evalSeed: 900 })).toThrow(/evaluation games' seeds \(900 to 999\) overlap the training games' \(0 to 999\)/);
    expect(() => loadWordle({ compact: true, seed: 50, numTasks: 10, evalSeed: 0, numEvalTasks: 51 })).toThrow(/overlap/);
    expect(loadWordle({ compact: true, seed: 50, numTasks: 10, evalSeed: 0, numEvalTasks: 50 }).evaluationTasks).toHaveLength(50);
    // The held-out split is disjoint by answer, so its seed may be anything.
    expect(loadWordle({ compact: true, numTasks: 1000, evalSeed: 900, evalSplit: 'held-out' }).evaluationTasks).toHaveLength(100);
  });

  test("evalSplit 'held-out' selects the generalisation split: one game per held-out answer, none a training answer", () => {
    const game = loadWordle({ compact: true, numTasks: 1000, evalSplit: 'held-out' });
    expect(game.evaluationTasks.map((t) => t.answer).sort()).toEqual([...COMPACT_ANSWER_POOL.heldOut].sort());
    const training = new Set(game.dataset.map((t) => t.answer!));
    expect(game.evaluationTasks.some((t) => training.has(t.answer!))).toBe(false);
    expect(loadWordle({ compact: true, evalSplit: 'held-out', numEvalTasks: 10 }).evaluationTasks).toHaveLength(10);
  });
});

describe('compact wordle pool size', () => {
  test('the default pool is the 300-word pool of before: same words, splits, dictionary and tasks', () => {
    // The pool as it was defined before poolSize existed: the first 300 words of this shuffle.
    const before = createRng(20260515).shuffle(WORDLE_ANSWERS).slice(0, 300);
    expect(compactAnswerPool()).toBe(COMPACT_ANSWER_POOL);
    expect(COMPACT_ANSWER_POOL.all).toEqual(before);
    expect(COMPACT_ANSWER_POOL.heldOut).toEqual(before.slice(0, 100));
    expect(COMPACT_ANSWER_POOL.practice).toEqual(before.slice(100, 200));
    expect(COMPACT_ANSWER_POOL.demonstration).toEqual(before.slice(200));
    expect([...COMPACT_DICTIONARY].sort()).toEqual([...before].sort());
    // Pinned from the code before poolSize: the first words of each split and of seed 0's task lists.
    expect(COMPACT_ANSWER_POOL.heldOut.slice(0, 3)).toEqual(['noble', 'butte', 'grape']);
    expect(COMPACT_ANSWER_POOL.practice.slice(0, 3)).toEqual(['brake', 'orbit', 'sulky']);
    expect(COMPACT_ANSWER_POOL.demonstration.slice(0, 3)).toEqual(['teach', 'inept', 'drier']);
    const game = loadWordle({ compact: true });
    expect(game.dataset.slice(0, 4).map((t) => t.answer)).toEqual(['rigor', 'river', 'track', 'vicar']);
    const heldOutGame = loadWordle({ compact: true, evalSplit: 'held-out' });
    expect(heldOutGame.dataset).toEqual(game.dataset);
    expect(heldOutGame.evaluationTasks.slice(0, 4).map((t) => t.answer)).toEqual(['waive', 'spiny', 'plane', 'basis']);
    const explicit = loadWordle({ compact: true, poolSize: 300 });
    expect(explicit.dataset).toEqual(game.dataset);
    expect(explicit.demonstrationTasks).toEqual(game.demonstrationTasks);
    expect(explicit.evaluationTasks).toEqual(game.evaluationTasks);
  });

  test('a 2000-word pool keeps the held-out words, and its splits are disjoint and cover it', () => {
    const pool = compactAnswerPool(2000);
    expect(compactAnswerPool(2000)).toBe(pool); // cached
    expect(pool.all.slice(0, 300)).toEqual(COMPACT_ANSWER_POOL.all); // the same shuffle, longer
    expect(pool.heldOut).toEqual(COMPACT_ANSWER_POOL.heldOut);
    expect(pool.practice).toHaveLength(950);
    expect(pool.demonstration).toHaveLength(950);
    expect(new Set([...pool.heldOut, ...pool.practice, ...pool.demonstration]).size).toBe(2000);
    expect([...pool.training].sort()).toEqual([...pool.practice, ...pool.demonstration].sort());
    expect(pool.dictionary.size).toBe(2000);
    const odd = compactAnswerPool(301);
    expect([odd.practice.length, odd.demonstration.length]).toEqual([101, 100]); // practice first
  });

  test("a large pool's game: tasks come from its own splits, and a word outside the 300 is a valid guess", async () => {
    const big = loadWordle({ compact: true, poolSize: 2000, numTasks: 2000, evalSplit: 'held-out' });
    const pool = compactPoolOf(big)!;
    expect(pool).toBe(compactAnswerPool(2000));
    expect(compactPoolOf(env)).toBe(COMPACT_ANSWER_POOL);
    const answersOf = (tasks: readonly Task[]) => new Set(tasks.map((t) => t.answer as string));
    expect(answersOf(big.dataset)).toEqual(new Set(pool.practice));
    expect(answersOf(big.demonstrationTasks)).toEqual(new Set(pool.demonstration));
    expect(big.evaluationTasks.map((t) => t.answer)).toEqual(loadWordle({ compact: true, evalSplit: 'held-out' }).evaluationTasks.map((t) => t.answer)); // same held-out games
    const answer = pool.practice.find((word) => !COMPACT_DICTIONARY.has(word))!;
    const outside = pool.demonstration.find((word) => !COMPACT_DICTIONARY.has(word) && word !== answer)!;
    const trajectory = await big.rollout(new ScriptedClient([outside, answer]), { question: '????? + -', answer, task: 'wordle' });
    const state = trajectory.state as CompactWordleState;
    expect(state.guesses).toEqual([outside, answer]);
    expect(state.won).toBe(true);
    // the same guess in the default game is not a word
    const small = await env.rollout(new ScriptedClient([outside, outside]), task('crane'));
    expect(small.completion[1]!.content).toBe('not a word; ????? + -');
  });

  test("the built-in expert plays a large pool's game from that pool and wins", async () => {
    const big = await loadBuiltinEnvironment('wordle', { compact: true, poolSize: 2000, numTasks: 20 });
    const pool = compactPoolOf(big)!;
    const outsideAnswers = big.dataset.filter((t) => !COMPACT_DICTIONARY.has(t.answer as string));
    expect(outsideAnswers.length).toBeGreaterThan(10);
    const teacher = new ScriptedClient(await loadBuiltinExpert('wordle', big));
    const result = await evaluate(big, teacher, { tasks: outsideAnswers });
    expect(result.summary.passRate).toBeGreaterThan(0.6);
    expect(result.summary.scores.validWordsReward).toBe(1);
    const guesses = result.records.flatMap((record) => (record.state as CompactWordleState).guesses);
    expect(guesses.every((guess) => pool.dictionary.has(guess))).toBe(true);
    expect(guesses.some((guess) => !COMPACT_DICTIONARY.has(guess))).toBe(true); // not only the 300 words
    // the default teacher, which knows only the 300 words, cannot win these games
    const narrow = await evaluate(big, new ScriptedClient(compactWordleTeacher()), { tasks: outsideAnswers });
    expect(narrow.summary.passRate).toBe(0);
  });

  test('bad pool sizes are refused with the range', () => {
    for (const poolSize of [119, 2316, 500.5, '600', 0]) {
      expect(() => loadWordle({ compact: true, poolSize: poolSize as number })).toThrow(/poolSize must be a whole number from 120 .* to 2315/);
    }
    expect(() => compactAnswerPool(50)).toThrow(/poolSize/);
    expect(compactAnswerPool(120).practice).toHaveLength(10);
    expect(compactAnswerPool(WORDLE_ANSWERS.length).all).toHaveLength(2315);
  });
});
