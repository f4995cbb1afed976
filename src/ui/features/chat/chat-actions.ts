/**
 * The side-by-side chat: one message goes to the base model (before training) and to the trained one
 * (the open run's weights, or weights imported from a file), each keeping its own multi-turn history,
 * and both answers land in the chat slice as they come. Components call these.
 */
import { ChatClientError, type Message } from '../../../envs/index.ts';
import { createEngineChatClient, type ChatModelChoice } from '../../../workers/engine-bridge.ts';
import { usePlayground, type PlaygroundState } from '../../store/index.ts';
import type { ChatTurn } from './chat-slice.ts';
import { ensureEngine, loadOpenRunWeights } from '../training/training-actions.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { actionState } from '../../store/action-state.ts';

const store = usePlayground;
/** The Stop of the chat answers in progress. */
const chat = actionState(() => ({ stopController: undefined as AbortController | undefined }));

/** What the trained column runs, in words ("reverse-text · 3 SFT + 2 GRPO steps", "weights from x.zip"), or null when there is no trained model yet. */
export function trainedModelLabel(state: Pick<PlaygroundState, 'trainingRun' | 'importedModel'>): string | null {
  if (state.importedModel) return state.importedModel;
  const run = state.trainingRun;
  if (!run || run.sft.length + run.grpo.length === 0) return null;
  return `${run.environment} · ${run.sft.length} SFT + ${run.grpo.length} GRPO steps`;
}

/** Whether a chat message is being answered. */
export function chatBusy(state: Pick<PlaygroundState, 'chatTurns'>): boolean {
  return state.chatTurns.some((turn) => turn.base.status === 'pending' || turn.trained.status === 'pending');
}

/** One column's conversation so far: the person's messages and that column's answers (failed turns left out). */
function history(turns: readonly ChatTurn[], column: ChatModelChoice): Message[] {
  return turns.flatMap((turn) =>
    turn[column].status === 'done'
      ? [
          { role: 'user', content: turn.user },
          { role: 'assistant', content: turn[column].text },
        ]
      : [],
  );
}

/** Sends `text` to both models; each answer lands in its column. */
export async function sendChat(text: string): Promise<void> {
  const state = store.getState();
  const label = trainedModelLabel(state);
  if (!text.trim() || !label || chatBusy(state)) return;
  const index = state.chatTurns.length;
  const previous = state.chatTurns;
  state.addChatTurn({ user: text, base: { status: 'pending', text: '' }, trained: { status: 'pending', text: '' }, trainedLabel: label });
  chat.stopController = new AbortController();
  const signal = chat.stopController.signal;
  try {
    await ensureEngine();
    await loadOpenRunWeights();
  } catch (error) {
    const failed = { status: 'failed' as const, text: '', error: message(error) };
    store.getState().setChatAnswer(index, 'base', failed);
    store.getState().setChatAnswer(index, 'trained', failed);
    return;
  }
  const {
    chatSettings: { temperature, maxTokens },
    trainingRun,
    importedModel,
  } = store.getState();
  // The base is the open run's starting point (its seed); imported weights are compared with the engine's own.
  const baseSeed = importedModel ? undefined : trainingRun?.seed;
  const ask = async (column: ChatModelChoice) => {
    const started = performance.now();
    try {
      const completion = await createEngineChatClient(column, baseSeed).chat.completions.create({
        model: column,
        messages: [...history(previous, column), { role: 'user', content: text }],
        temperature,
        max_tokens: maxTokens,
        seed: 0,
        signal,
      });
      const answer = completion.choices[0]?.message.content ?? '';
      store.getState().setChatAnswer(index, column, { status: 'done', text: typeof answer === 'string' ? answer : JSON.stringify(answer), ms: performance.now() - started });
    } catch (error) {
      const stopped = error instanceof ChatClientError && error.kind === 'aborted';
      store.getState().setChatAnswer(index, column, { status: 'failed', text: '', error: stopped ? 'stopped' : message(error) });
    }
  };
  await Promise.all([ask('base'), ask('trained')]);
  chat.stopController = undefined;
}

/** Stops the answers being generated. */
export function stopChat(): void {
  chat.stopController?.abort();
}

/** Stops any answer in progress and empties the conversation. */
export function clearChat(): void {
  stopChat();
  store.getState().clearChat();
}

function message(error: unknown): string {
  return errorMessage(error);
}
