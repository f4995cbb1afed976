import { describe, expect, test } from 'vitest';
import { answersMatch, chunkDocument, chunkDocuments, EmptyDocumentError, normalizeAnswer, parseCandidateList, parseYesNo } from '../../../../src/envs/studio/index.ts';

describe('chunkDocument', () => {
  test('Markdown: a heading starts a new chunk (a bare title makes none), and every span slices back to the chunk text', () => {
    const text = '# Tea notes\n\n# Intro\n\nFirst paragraph about tea.\n\nSecond paragraph.\n\n## Brewing\n\nBoil water to 90 degrees.\n';
    const chunks = chunkDocument({ name: 'tea.md', text });
    expect(chunks.map((chunk) => chunk.heading)).toEqual(['Intro', 'Brewing']);
    expect(chunks[0]!.text).toBe('# Intro\n\nFirst paragraph about tea.\n\nSecond paragraph.');
    expect(chunks[1]!.text).toBe('## Brewing\n\nBoil water to 90 degrees.');
    for (const chunk of chunks) {
      expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
      expect(chunk.id).toBe(`tea.md#${chunk.start}-${chunk.end}`);
    }
  });

  test('plain text: "#" lines are text, paragraphs join up to maxChars, a long paragraph is cut at sentence ends', () => {
    const sentence = 'This sentence has exactly fifty characters in it. ';
    const text = `# not a heading\n\n${sentence.repeat(6).trim()}\n\nshort tail`;
    const chunks = chunkDocument({ name: 'notes.txt', text }, { maxChars: 120 });
    for (const chunk of chunks) {
      expect(chunk.end - chunk.start).toBeLessThanOrEqual(120);
      expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
    }
    expect(chunks.every((chunk) => chunk.heading === undefined)).toBe(true);
    expect(chunks.at(-1)!.text.endsWith('short tail')).toBe(true);
    // Sentence cuts never split a sentence in the middle.
    expect(chunks.slice(1, -1).every((chunk) => chunk.text.endsWith('.') || chunk.text.endsWith('short tail'))).toBe(true);
  });

  test('pasted text asks for separate paragraphs: four short paragraphs are four chunks, spans intact', () => {
    const text = 'Aldermoor has a harbour.\n\nIts lighthouse is red.\n\n\nThe mayor is Ida Venn.\n\nFerries leave at 7.';
    const joined = chunkDocument({ name: 'pasted-1', text });
    expect(joined).toHaveLength(1);
    const separate = chunkDocument({ name: 'pasted-1', text, paragraphs: 'separate' });
    expect(separate.map((chunk) => chunk.text)).toEqual(['Aldermoor has a harbour.', 'Its lighthouse is red.', 'The mayor is Ida Venn.', 'Ferries leave at 7.']);
    for (const chunk of separate) expect(text.slice(chunk.start, chunk.end)).toBe(chunk.text);
    // A paragraph shorter than minChars still joins the next one.
    expect(chunkDocument({ name: 'pasted-1', text: 'Hi.\n\nThe mayor is Ida Venn.', paragraphs: 'separate' }, { minChars: 10 }).map((chunk) => chunk.text)).toEqual(['Hi.\n\nThe mayor is Ida Venn.']);
  });

  test('an empty document is an error that names it; no documents at all too', () => {
    expect(() => chunkDocuments([{ name: 'a.txt', text: 'Some text.' }, { name: 'blank.md', text: '  \n\n ' }])).toThrow(EmptyDocumentError);
    expect(() => chunkDocuments([{ name: 'blank.md', text: '' }])).toThrow('document "blank.md" is empty');
    expect(() => chunkDocuments([])).toThrow('no documents');
  });
});

describe('parseCandidateList', () => {
  test.each([
    ['a bare array', '[{"question": "Q1?", "answer": "A1"}]'],
    ['an object holding the array', '{"questions": [{"question": "Q1?", "answer": "A1"}]}'],
    ['a code fence after prose', 'Here you go:\n```json\n[{"question": "Q1?", "answer": "A1"}]\n```\nHope it helps.'],
    ['an array inside prose', 'Sure! [{"question": "Q1?", "answer": "A1"}] Done.'],
    ['one object', '{"question": "Q1?", "answer": "A1"}'],
  ])('reads %s', (_label, reply) => {
    expect(parseCandidateList(reply)).toEqual({ ok: true, pairs: [{ question: 'Q1?', answer: 'A1' }], malformed: [] });
  });

  test('items without an answer or a question are malformed, by index; numbers are answers', () => {
    const parsed = parseCandidateList('[{"question": "Q?", "answer": 42}, {"question": "No answer?"}, {"answer": "x"}, "text"]');
    expect(parsed).toMatchObject({ ok: true, pairs: [{ question: 'Q?', answer: '42' }] });
    if (!parsed.ok) throw new Error('unreachable');
    expect(parsed.malformed.map((item) => [item.index, item.reason])).toEqual([
      [1, 'the item has no "answer" text'],
      [2, 'the item has no "question" text'],
      [3, 'the item is not an object with "question" and "answer"'],
    ]);
  });

  test('a reply that is not JSON is a reason, never a throw', () => {
    expect(parseCandidateList('I cannot write questions about this.')).toMatchObject({ ok: false, reason: expect.stringContaining('not JSON') });
    expect(parseCandidateList('')).toMatchObject({ ok: false, reason: 'the generator replied with nothing' });
    expect(parseCandidateList('{"note": "nothing here"}')).toMatchObject({ ok: false, reason: expect.stringContaining('no list') });
  });
});

describe('answer matching and verdicts', () => {
  test('normalised exact match after a final "Answer:" label', () => {
    expect(normalizeAnswer('The  Eiffel Tower!')).toBe('eiffel tower');
    expect(answersMatch('Let me think.\nAnswer: the Eiffel tower.', 'Eiffel Tower')).toBe(true);
    expect(answersMatch('Eiffel', 'Eiffel Tower')).toBe(false);
    expect(answersMatch('anything', '')).toBe(false);
  });

  test('yes/no verdicts: a Verdict line wins; no verdict throws a non-fatal JudgeError', () => {
    expect(parseYesNo('The answer says yes but is wrong.\nVerdict: no')).toBe(false);
    expect(parseYesNo('Both name the same tower.\n**Yes**')).toBe(true);
    expect(parseYesNo('Yes, they match.')).toBe(true);
    expect(() => parseYesNo('They are similar.')).toThrow(expect.objectContaining({ name: 'JudgeError', kind: 'no-verdict', fatal: false }));
  });
});
