/**
 * The offline solver fills a fill-in question's blank from the passage whenever the answer word is
 * there: a blank that opens a sentence past the first, a question worded differently from the
 * passage, quotes inside the sentence; and the offline generator blanks whole words only.
 */
import { describe, expect, test } from 'vitest';
import { HeuristicStudioClient } from '../../../../src/envs/studio/heuristic-clients.ts';
import { generatorPrompt, solverPrompt } from '../../../../src/envs/studio/synthesize.ts';

const ask = async (role: 'solver' | 'generator', content: string) =>
  (await new HeuristicStudioClient(role).chat.completions.create({ model: `heuristic-${role}`, messages: [{ role: 'user', content }] })).choices[0]!.message.content ?? '';

const PASSAGE = 'The town is old and quiet. Fishermen gather near the quay every morning. The lighthouse on the north pier is painted bright red. Its keeper told "the Mayor" Ida Venn about the storm in 1962';

describe('offline solver', () => {
  test.each([
    ['a blank that opens the second sentence', 'Fill in the blank from the document: "____ gather near the quay every morning."', 'Fishermen'],
    ['the passage in other words', 'Fill in the blank from the document: "The north pier lighthouse is painted bright ____."', 'red'],
    ['quotes inside the sentence, blank at its unpunctuated end', 'Fill in the blank from the document: "Its keeper told "the Mayor" Ida Venn about the storm in ____"', '1962'],
    ['the sentence word for word', 'Fill in the blank from the document: "The lighthouse on the north pier is painted bright ____."', 'red'],
  ])('%s', async (_case, question, answer) => {
    expect(await ask('solver', solverPrompt(question, PASSAGE))).toBe(answer);
  });

  test('without the passage it does not know', async () => {
    expect(await ask('solver', solverPrompt('Fill in the blank from the document: "____ gather near the quay every morning."'))).toBe('I do not know.');
  });
});

describe('offline generator', () => {
  test('blanks the answer as a whole word, not inside a longer one', async () => {
    const text = 'Idaho ferries were first captained by Ida in the spring.';
    const reply = JSON.parse(await ask('generator', generatorPrompt({ id: 'p#0-1', source: 'p', start: 0, end: text.length, text }, 3))) as { question: string; answer: string }[];
    expect(reply[0]).toEqual({ question: 'Fill in the blank from the document: "Idaho ferries were first captained by ____ in the spring."', answer: 'Ida' });
    expect(await ask('solver', solverPrompt(reply[0]!.question, text))).toBe('Ida');
  });
});
