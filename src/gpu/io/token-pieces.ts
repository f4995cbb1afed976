/**
 * The text each sampled token adds, for a viewer that shows a completion token by token. It runs
 * where the tokenizer lives (the engine worker), so the app renders strings and never needs a
 * model's vocabulary. It is not a streaming detokenizer for generation.
 */
import type { Tokenizer } from './tokenizer.ts';

/** Tokens of context decoded before each token, so a decoder's rules at the start of a text (a stripped leading space) do not change a piece. */
const CONTEXT_TOKENS = 4;
const REPLACEMENT = '\uFFFD';

/**
 * Returns one string per id whose concatenation is `tokenizer.decode(ids)`: the text the token
 * completes. A token that holds only part of a multi-byte character gives '' and the token that
 * completes the character carries it; a part left incomplete at the end shows as the lone bytes'
 * text of its tokens decoded on their own (U+FFFD for a byte tokenizer).
 */
export function tokenPieces(tokenizer: Tokenizer, ids: readonly number[]): string[] {
  const pieces: string[] = [];
  // A window ids[from, i) of the completion and the text of it already handed out (whole characters only).
  let from = 0;
  let done = '';
  for (let i = 0; i < ids.length; i++) {
    const text = tokenizer.decode(ids.slice(from, i + 1));
    // Bytes still waiting for the rest of their character go to a later token (the last token takes all).
    const complete = i + 1 === ids.length ? text : stripIncomplete(text);
    if (!complete.startsWith(done)) {
      // The decoder rewrote text it had given out: show this token on its own and start afresh.
      pieces.push(tokenizer.decode([ids[i]!]));
      from = i + 1;
      done = '';
      continue;
    }
    pieces.push(complete.slice(done.length));
    done = complete;
    // Slide the window once nothing is pending, keeping a few tokens of context (decoding stays linear in the length).
    if (complete.length === text.length && i + 1 - from > CONTEXT_TOKENS) {
      from = i + 1 - CONTEXT_TOKENS;
      done = tokenizer.decode(ids.slice(from, i + 1));
    }
  }
  return pieces;
}

/** `text` without the U+FFFD characters at its end (a decoder's stand-in for bytes still waiting for the rest of their character). */
function stripIncomplete(text: string): string {
  let end = text.length;
  while (end > 0 && text[end - 1] === REPLACEMENT) end--;
  return text.slice(0, end);
}
