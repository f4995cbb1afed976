import { describe, expect, test } from 'vitest';
import { ScriptedClient, evaluate, type Task } from '../../../../src/envs/index.ts';
import loadWordle, { MAX_GUESSES, chooseWordleGuess, feedbackCode, formatFeedback, scoreGuess, wordleExpertPolicy, type WordleState } from '../../../../src/envs/builtin/wordle.ts';
import { WORDLE_ANSWERS } from '../../../../src/envs/builtin/data/wordle-words.ts';
import { createRng } from '../../../../src/envs/builtin/random.ts';

const env = loadWordle({ numTasks: 10, numEvalTasks: 20 });
const task = (answer: string): Task => ({ question: env.dataset[0]!.question, answer, task: 'wordle' });
const play = async (answer: string, replies: string[]) => {
  const trajectory = await env.rollout(new ScriptedClient(replies), task(answer));
  const userMessages = trajectory.completion.filter((message) => message.role === 'user').map((message) => message.content);
  return { trajectory, state: trajectory.state as WordleState, userMessages };
};

describe('wordle feedback', () => {
  test.each([
    ['babes', 'abbey', 'YYGGX'], // the two b's: one green, one yellow; the s is gray
    ['eerie', 'crane', 'XXYXG'], // the final e is green and uses up crane's only e, so the first two are gray
    ['geese', 'speed', 'XYGYX'], // speed has two e's: one green, one yellow for the first free e, the last e gray
    ['geese', 'those', 'XXXGG'], // greens consume first: the earlier e's must not take the green e as yellow
    ['kebab', 'abbey', 'XYGYY'], // the second b is yellow because abbey's other b is still free
    ['crane', 'crane', 'GGGGG'],
    ['slate', 'crane', 'XXGXG'],
  ])('guess %s against %s is %s', (guess, secret, marks) => {
    expect(scoreGuess(guess, secret)).toBe(marks);
  });

  test('the solver fast path agrees with scoreGuess (base-3 code, X 0 Y 1 G 2)', () => {
    const rng = createRng(7);
    for (let i = 0; i < 2000; i++) {
      const guess = rng.pick(WORDLE_ANSWERS);
      const secret = rng.pick(WORDLE_ANSWERS);
      const expected = [...scoreGuess(guess, secret)].reduceRight((code, mark) => code * 3 + 'XYG'.indexOf(mark), 0);
      expect(feedbackCode(guess, secret)).toBe(expected);
    }
  });

  test('the feedback message is spaced letters over spaced marks', () => {
    expect(formatFeedback('arise', 'XYXYX')).toBe('A R I S E\nX Y X Y X');
  });
});

describe('wordle rollouts', () => {
  test('a won game: final feedback is sent, rewards are exact', async () => {
    const { trajectory, state, userMessages } = await play('crane', ['<guess>slate</guess>', '<guess>crane</guess>']);
    expect(userMessages).toEqual([
      'S L A T E\nX X G X G\nYou have 5 guesses left.',
      'C R A N E\nG G G G G\nYou guessed the word in 2 guesses!',
    ]);
    expect(trajectory.stopReason).toBe('completed');
    expect(state.won).toBe(true);
    expect(trajectory.scores).toEqual({ winReward: 1, partialCreditReward: 0, speedReward: 0.5, formatReward: 1, invalidGuessesMetric: 0 });
    expect(trajectory.reward).toBeCloseTo(1 + 0.5 + 0.2, 12);
    expect(env.isPassed(trajectory)).toBe(true);
  });

  test('a lost game: six guesses, the secret revealed, partial credit from the last guess', async () => {
    const guesses = ['slate', 'pious', 'dwelt', 'eerie', 'bongo', 'crank'];
    const { trajectory, state, userMessages } = await play('crane', guesses.map((guess) => `<guess>${guess}</guess>`));
    expect(state.guesses).toEqual(guesses);
    expect(userMessages).toHaveLength(MAX_GUESSES);
    expect(userMessages[3]).toBe('E E R I E\nX X Y X G\nYou have 2 guesses left.');
    expect(userMessages.at(-1)).toBe('C R A N K\nG G G G X\nNo guesses left. The word was CRANE.');
    expect(trajectory.stopReason).toBe('completed');
    expect(trajectory.scores.winReward).toBe(0);
    expect(trajectory.scores.speedReward).toBe(0);
    expect(trajectory.scores.partialCreditReward).toBeCloseTo(0.8, 12);
    expect(trajectory.reward).toBeCloseTo(0.8 + 0.2, 12);
    expect(env.isPassed(trajectory)).toBe(false); // the best loss must not pass
  });

  test('repeated letters are marked correctly inside the game', async () => {
    const { userMessages } = await play('abbey', ['<guess>babes</guess>', '<guess>kebab</guess>', '<guess>abbey</guess>']);
    expect(userMessages[0]).toBe('B A B E S\nY Y G G X\nYou have 5 guesses left.');
    expect(userMessages[1]).toBe('K E B A B\nX Y G Y Y\nYou have 4 guesses left.');
    expect(userMessages[2]).toBe('A B B E Y\nG G G G G\nYou guessed the word in 3 guesses!');
  });

  test('invalid moves are explained, counted, use no guess, and two in a row end the game', async () => {
    const { trajectory, state, userMessages } = await play('crane', [
      'I think crane',
      '<guess>slate</guess>',
      '<guess>SLATE</guess>',
      '<guess>xyzzy</guess>',
      '<guess>crane</guess>',
    ]);
    expect(userMessages).toEqual([
      'Invalid move: no guess found. Put your word inside <guess>...</guess> tags. This did not use a guess. You have 6 guesses left.',
      'S L A T E\nX X G X G\nYou have 5 guesses left.',
      'Invalid move: you already guessed "slate". This did not use a guess. You have 5 guesses left.',
      'Invalid move: "xyzzy" is not in the word list. That is 2 invalid moves in a row, so the game is over. The word was CRANE.',
    ]);
    expect(trajectory.completion.filter((message) => message.role === 'assistant')).toHaveLength(4); // the 5th reply is never asked for
    expect(state.invalidGuesses).toBe(3);
    expect(state.guesses).toEqual(['slate']);
    expect(trajectory.scores.invalidGuessesMetric).toBe(3);
    expect(trajectory.scores.partialCreditReward).toBeCloseTo(0.4, 12); // slate: two greens
    expect(trajectory.scores.formatReward).toBeCloseTo(0.75, 12); // 3 of 4 replies tagged
    expect(trajectory.reward).toBeCloseTo(0.4 + 0.2 * 0.75, 12);
  });

  test('a wrong length and non-letters are invalid too; a valid guess in between resets the count', async () => {
    const { state, userMessages } = await play('crane', ['<guess>cat</guess>', '<guess>slate</guess>', '<guess>cr4ne</guess>', '<guess>crane</guess>']);
    expect(userMessages[0]).toBe('Invalid move: "cat" has 3 letters, not 5. This did not use a guess. You have 6 guesses left.');
    expect(userMessages[2]).toBe('Invalid move: "cr4ne" is not a single word of letters. This did not use a guess. You have 5 guesses left.');
    expect(state.won).toBe(true);
    expect(state.invalidGuesses).toBe(2);
  });

  test('the turn limit truncates a game that alternates invalid and valid moves', async () => {
    const replies = ['x', '<guess>slate</guess>', 'x', '<guess>pious</guess>', 'x', '<guess>dwelt</guess>', 'x', '<guess>bongo</guess>'];
    const { trajectory, state } = await play('crane', replies);
    expect(trajectory.stopReason).toBe('max_turns');
    expect(trajectory.truncated).toBe(true);
    expect(state.guesses).toHaveLength(4);
  });
});

describe('wordle expert', () => {
  test('wins every held-out game within six guesses', async () => {
    const result = await evaluate(env, new ScriptedClient(wordleExpertPolicy), { numTasks: 20 });
    expect(result.summary.numRollouts).toBe(20);
    expect(result.summary.passRate).toBe(1);
    expect(result.summary.scores.invalidGuessesMetric).toBe(0);
    expect(result.summary.scores.formatReward).toBe(1);
    expect(result.summary.reward.mean).toBeGreaterThan(1.35); // wins in about 4 guesses or fewer on average
  });

  test('only proposes words consistent with the feedback so far', () => {
    const history = [{ guess: 'salet', marks: scoreGuess('salet', 'crane') }, { guess: 'crony', marks: scoreGuess('crony', 'crane') }];
    const next = chooseWordleGuess(history);
    expect(next).not.toBe('salet');
    const candidates = WORDLE_ANSWERS.filter((word) => history.every(({ guess, marks }) => scoreGuess(guess, word) === marks));
    expect(candidates).toContain('crane');
    if (candidates.length <= 2) expect(candidates).toContain(next);
  });
});
