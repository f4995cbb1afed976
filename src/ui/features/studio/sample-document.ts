/**
 * A short Markdown document for lesson 5 and the tests: an invented harbour town, so a model cannot
 * know its facts without reading it (closed book fails, open book passes: the grounding gap). Its
 * sentences hold numbers, names and plain words, the three kinds of answer the offline tools tell
 * apart, and one sentence twice, so the offline generator proposes a duplicate that is rejected.
 */

/** The sample document: its file name and text. */
export const SAMPLE_DOCUMENT = {
  name: 'aldermoor.md',
  text: `# The harbour of Aldermoor

Aldermoor is a small fishing town on the northern coast of Velland. The harbour was built in 1794 by the engineer Tobias Wren. Its stone breakwater is 412 metres long and shelters about 60 boats in winter.

## The lighthouse

The lighthouse stands on a rock called the Anvil, two kilometres from the quay. Its lamp was first lit in 1821 and flashes white every 9 seconds. The last keeper, Marta Holm, left the tower in 1968, when the light became automatic.

## Trade

Most boats land herring and mackerel, which are smoked in sheds along Tarry Lane. Fishermen mend their nets beside the smokehouses every morning. Every August the town holds the Lantern Fair, where boats are decorated with paper lanterns and sailed around the breakwater at dusk.

## For visitors

The harbour was built in 1794 by the engineer Tobias Wren. Visitors can climb the lighthouse on Sundays in summer.
`,
};
