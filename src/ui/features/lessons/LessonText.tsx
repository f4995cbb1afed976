/** Renders a lesson step's small markup: `code`, **bold**, and fenced ``` code blocks. */
import type { ReactNode } from 'react';

/** Inline markup of one line of text: `code` and **bold**. */
function inline(text: string): ReactNode[] {
  return text
    .split(/(`[^`]+`|\*\*[^*]+\*\*)/g)
    .filter((part) => part !== '')
    .map((part, i) => {
      if (part.startsWith('`')) return <code key={i}>{part.slice(1, -1)}</code>;
      if (part.startsWith('**')) return <b key={i}>{part.slice(2, -2)}</b>;
      return part;
    });
}

/** A step: paragraphs of inline markup, with fenced blocks as <pre>. */
export function LessonText({ text }: { text: string }) {
  const pieces = text.split(/\n?```[a-z]*\n([\s\S]*?)\n```\n?/g);
  return (
    <>
      {pieces.map((piece, i) =>
        i % 2 === 1 ? (
          <pre key={i} className="lesson-code">
            {piece}
          </pre>
        ) : piece === '' ? null : (
          <p key={i}>{inline(piece)}</p>
        ),
      )}
    </>
  );
}
