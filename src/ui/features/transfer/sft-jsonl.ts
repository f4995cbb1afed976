/**
 * Warm-up data imported as JSONL of OpenAI-format chats (`{"messages": [{"role", "content"}, ...]}`
 * per line, the format TRL and `tabrl` write): parsed and checked line by line, so a bad file is
 * rejected with the number of its first bad line and what that line lacks. Pure.
 */
import type { Message } from '../../../envs/index.ts';
import { examplesToJsonl, parseSftJsonl, type SftExample } from '../../../rl/sft-data.ts';

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** The transcripts of an imported warm-up file; throws `"<file>, line N: …"` at its first bad line, or when it holds none. */
export function parseWarmupJsonl(text: string, fileName: string): Message[][] {
  const examples = parseSftJsonl(text, fileName);
  const lines = text.split('\n');
  let example = 0;
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const { messages } = examples[example++]!;
    const bad = messages.findIndex((message) => !ROLES.has(message.role));
    if (bad >= 0) throw new Error(`${fileName}, line ${index + 1}: message ${bad + 1} has role "${messages[bad]!.role}"; expected one of system, user, assistant, tool`);
  });
  if (examples.length === 0) throw new Error(`${fileName} holds no chats: expected one {"messages": [...]} object per line`);
  return examples.map((item) => item.messages);
}

/** Warm-up transcripts as JSONL, one `{"messages": [...]}` per line (what `parseWarmupJsonl` reads back). */
export function warmupToJsonl(transcripts: readonly Message[][]): string {
  return examplesToJsonl(transcripts.map((messages): SftExample => ({ messages })));
}
