/**
 * The offline simulator: a ChatClient that reads the simulator prompt (tool-simulator.ts) and
 * answers with the result of the listed call of the same tool whose arguments are closest to the
 * call to answer — nearest-record retrieval over what the prompt shows (recorded examples, the
 * episode's facts, corrections; on a tie the one listed first, the closest recorded example, so a
 * planted fact answers only the calls it is closest to and never leaks to an unrelated call). It is
 * a transparent rule for tests, lessons and offline runs, not a model: it never invents a result
 * that is not in its prompt.
 */
import type { ChatClient, ChatCompletion, ChatRequest } from '../client.ts';
import type { ToolRecord } from './tool-records.ts';
import { parseArguments } from './tool-records.ts';
import { argumentSimilarity } from './tool-retrieval.ts';
import { SIMULATOR_CALL_HEADING, SIMULATOR_TASK_LINE } from './tool-simulator.ts';

/** The reply when the prompt lists no call of the tool. */
export const SCRIPTED_SIMULATOR_NO_RECORD = '{"error": "no recorded call of this tool"}';

/** Answers simulator prompts by nearest-record retrieval; see the module comment. */
export class ScriptedSimulatorClient implements ChatClient {
  /** Prompts answered. */
  requests = 0;

  readonly chat = {
    completions: {
      create: async (request: ChatRequest): Promise<ChatCompletion> => {
        this.requests += 1;
        const prompt = request.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
        return { id: 'scripted-simulator', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content: answerSimulatorPrompt(prompt) }, finish_reason: 'stop' }] };
      },
    },
  };
}

/** The scripted simulator's answer to one prompt. */
export function answerSimulatorPrompt(prompt: string): string {
  const at = prompt.lastIndexOf(SIMULATOR_TASK_LINE);
  if (at < 0) return SCRIPTED_SIMULATOR_NO_RECORD;
  const listed = readBlocks(prompt.slice(0, at));
  const call = readBlocks(prompt.slice(at))[0];
  if (!call) return SCRIPTED_SIMULATOR_NO_RECORD;
  let best: { record: ToolRecord; similarity: number } | undefined;
  for (const record of listed) {
    if (record.tool !== call.tool) continue;
    const similarity = argumentSimilarity(call.arguments, record.arguments);
    if (!best || similarity > best.similarity) best = { record, similarity };
  }
  return best?.record.result ?? SCRIPTED_SIMULATOR_NO_RECORD;
}

/** The `### Call NAME / args / ### Result / text` blocks of a prompt section, in order. */
function readBlocks(text: string): ToolRecord[] {
  const blocks: ToolRecord[] = [];
  const pattern = new RegExp(`^${SIMULATOR_CALL_HEADING}(\\S+)\\n(.*)\\n### Result\\n([\\s\\S]*?)(?=\\n${SIMULATOR_CALL_HEADING}|\\n\\n|\\n?(?![\\s\\S]))`, 'gm');
  for (const match of text.matchAll(pattern)) blocks.push({ tool: match[1]!, arguments: parseArguments(match[2]!), result: match[3]!.trim() });
  return blocks;
}
