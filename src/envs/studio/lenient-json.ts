/**
 * Finding JSON in a model's reply: fenced ```json blocks, the whole reply, or the outermost [...]
 * or {...} inside prose. Returns the first reading that parses, or undefined.
 */

/** The first JSON value found in `text` (see the module comment), or undefined when none parses. */
export function parseJsonLeniently(text: string): unknown {
  for (const candidate of jsonCandidates(text.trim())) {
    try {
      return JSON.parse(candidate) as unknown;
    } catch {
      // try the next reading
    }
  }
  return undefined;
}

/** Texts that may be JSON, most specific first. */
function jsonCandidates(text: string): string[] {
  const fenced = [...text.matchAll(/```[\w-]*\s*\n?([\s\S]*?)```/g)].map((match) => match[1]!.trim());
  const between = (open: string, close: string) => {
    const first = text.indexOf(open);
    const last = text.lastIndexOf(close);
    return first >= 0 && last > first ? [text.slice(first, last + 1)] : [];
  };
  return [...fenced, text, ...between('[', ']'), ...between('{', '}')];
}
