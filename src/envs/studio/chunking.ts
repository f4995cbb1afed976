/**
 * Splits documents (plain text or Markdown) into chunks that a generator can ground questions in.
 * Each chunk keeps its source and its character span [start, end) in the original text, so
 * `document.text.slice(start, end) === chunk.text` always holds. Chunks follow paragraphs; in
 * Markdown a heading always starts a new chunk, so a chunk never straddles two sections, and a
 * heading with no text under it (a title above a subheading) makes no chunk of its own. Paragraphs
 * join up to the size limit, or stay one chunk each for a document that asks for it (pasted text).
 */

/** A document given to the studio: a name (a file name or "pasted-1") and its text. */
export interface StudioDocument {
  name: string;
  text: string;
  /** 'markdown' splits at headings too; default: by the name (.md, .markdown) or 'text'. */
  format?: 'text' | 'markdown';
  /**
   * 'separate' makes each paragraph its own chunk (pasted text, where a blank line is the only
   * structure: each paragraph gets its own questions); default 'join': paragraphs join up to maxChars.
   */
  paragraphs?: 'join' | 'separate';
}

/** A piece of a document with where it came from. */
export interface Chunk {
  /** `name#start-end`, unique across the documents of one run. */
  id: string;
  /** The document's name. */
  source: string;
  /** Character offset of the chunk's first character in the document. */
  start: number;
  /** Character offset one past the chunk's last character. */
  end: number;
  text: string;
  /** The nearest Markdown heading above the chunk, when there is one. */
  heading?: string;
}

/** How to chunk. */
export interface ChunkOptions {
  /** The longest chunk in characters (default 1500); a longer paragraph is cut at sentence ends. */
  maxChars?: number;
  /** Paragraphs shorter than this join the next one (default 1: keep every non-empty paragraph). */
  minChars?: number;
}

/** Thrown for documents the studio cannot use (empty, or nothing but whitespace). */
export class EmptyDocumentError extends Error {
  override readonly name = 'EmptyDocumentError';
}

interface Span {
  start: number;
  end: number;
  heading?: string;
  /** True for a Markdown heading line: it closes the chunk before it. */
  isHeading?: boolean;
  /** True once a paragraph joined the span (a heading with nothing under it makes no chunk). */
  hasBody?: boolean;
}

/** Chunks every document; throws `EmptyDocumentError` naming the first document without text. */
export function chunkDocuments(documents: readonly StudioDocument[], options: ChunkOptions = {}): Chunk[] {
  if (documents.length === 0) throw new EmptyDocumentError('no documents were given; pass at least one file or pasted text');
  return documents.flatMap((document) => {
    const chunks = chunkDocument(document, options);
    if (chunks.length === 0) throw new EmptyDocumentError(`document "${document.name}" is empty: it holds no text to make tasks from`);
    return chunks;
  });
}

/** Chunks one document; an empty document gives no chunks. */
export function chunkDocument(document: StudioDocument, options: ChunkOptions = {}): Chunk[] {
  const maxChars = Math.max(50, options.maxChars ?? 1500);
  const minChars = options.minChars ?? 1;
  const markdown = (document.format ?? (/\.(md|markdown)$/i.test(document.name) ? 'markdown' : 'text')) === 'markdown';
  const text = document.text;
  const separate = document.paragraphs === 'separate';
  const spans = paragraphSpans(text, markdown).flatMap((span) => (span.end - span.start > maxChars ? splitLong(text, span, maxChars) : [span]));

  const chunks: Chunk[] = [];
  let current: Span | undefined;
  const flush = () => {
    if (!current) return;
    const chunkText = text.slice(current.start, current.end);
    if (chunkText.trim() !== '' && (current.hasBody || !current.isHeading)) {
      chunks.push({
        id: `${document.name}#${current.start}-${current.end}`,
        source: document.name,
        start: current.start,
        end: current.end,
        text: chunkText,
        ...(current.heading ? { heading: current.heading } : {}),
      });
    }
    current = undefined;
  };
  for (const span of spans) {
    if (span.isHeading) {
      flush();
      current = { ...span };
      continue;
    }
    if (current && (separate || span.end - current.start > maxChars) && current.end - current.start >= minChars) flush();
    current = current ? { ...current, end: span.end, hasBody: true } : { ...span, hasBody: true };
  }
  flush();
  return chunks;
}

/** Paragraphs (runs of non-blank lines) with their spans; in Markdown each heading line is its own span. */
function paragraphSpans(text: string, markdown: boolean): Span[] {
  const spans: Span[] = [];
  let heading: string | undefined;
  let paragraph: Span | undefined;
  let offset = 0;
  let inFence = false;
  for (const line of text.split('\n')) {
    const lineStart = offset;
    const lineEnd = offset + line.length;
    offset = lineEnd + 1;
    if (markdown && /^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const headingMatch = markdown && !inFence ? /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line) : null;
    if (headingMatch) {
      if (paragraph) spans.push(paragraph);
      paragraph = undefined;
      heading = headingMatch[1];
      spans.push({ start: lineStart, end: lineEnd, heading, isHeading: true });
      continue;
    }
    if (line.trim() === '' && !inFence) {
      if (paragraph) spans.push(paragraph);
      paragraph = undefined;
      continue;
    }
    const start = paragraph ? paragraph.start : lineStart + (line.length - line.trimStart().length);
    paragraph = { start, end: lineStart + line.trimEnd().length, ...(heading ? { heading } : {}) };
    if (paragraph.end < paragraph.start) paragraph.end = paragraph.start;
  }
  if (paragraph) spans.push(paragraph);
  return spans;
}

/** Cuts a long paragraph at sentence ends (or hard at `maxChars` when a sentence is longer). */
function splitLong(text: string, span: Span, maxChars: number): Span[] {
  const pieces: Span[] = [];
  let start = span.start;
  while (span.end - start > maxChars) {
    const window = text.slice(start, start + maxChars);
    const sentenceEnds = [...window.matchAll(/[.!?](?=\s)/g)].map((match) => match.index! + 1);
    const cut = sentenceEnds.filter((end) => end > maxChars / 4).at(-1) ?? maxChars;
    pieces.push({ start, end: start + cut, ...(span.heading ? { heading: span.heading } : {}) });
    start += cut;
    while (start < span.end && /\s/.test(text[start]!)) start++;
  }
  if (start < span.end) pieces.push({ start, end: span.end, ...(span.heading ? { heading: span.heading } : {}) });
  return pieces;
}
