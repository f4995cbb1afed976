/** The chat slice: the side-by-side conversation with the base and the trained model (both columns' answers per turn) and its sampling settings. */
import type { StateCreator } from 'zustand';
import type { PlaygroundState } from '../../store/index.ts';

/** One column's answer to a turn. */
export interface ChatAnswer {
  status: 'pending' | 'done' | 'failed';
  text: string;
  /** Milliseconds the answer took. */
  ms?: number;
  /** Why it failed, in words. */
  error?: string;
}

/** One turn: the person's message and each model's answer. */
export interface ChatTurn {
  user: string;
  base: ChatAnswer;
  trained: ChatAnswer;
  /** Which trained weights answered (e.g. "reverse-text · 3 SFT + 2 GRPO steps"). */
  trainedLabel: string;
}

/** Sampling settings of the chat (0 temperature: greedy). */
export interface ChatSettings {
  temperature: number;
  maxTokens: number;
}

/** Chat state. */
export interface ChatSlice {
  chatTurns: ChatTurn[];
  chatSettings: ChatSettings;
  setChatSettings(settings: Partial<ChatSettings>): void;
  addChatTurn(turn: ChatTurn): void;
  /** Sets one column's answer of turn `index`. */
  setChatAnswer(index: number, column: 'base' | 'trained', answer: ChatAnswer): void;
  clearChat(): void;
}

/** Greedy and short, as suits the tiny model. */
const DEFAULT_CHAT_SETTINGS: ChatSettings = { temperature: 0, maxTokens: 32 };

/** Creates the chat slice. */
export const createChatSlice: StateCreator<PlaygroundState, [], [], ChatSlice> = (set) => ({
  chatTurns: [],
  chatSettings: DEFAULT_CHAT_SETTINGS,
  setChatSettings: (settings) => set((state) => ({ chatSettings: { ...state.chatSettings, ...settings } })),
  addChatTurn: (turn) => set((state) => ({ chatTurns: [...state.chatTurns, turn] })),
  setChatAnswer: (index, column, answer) => set((state) => ({ chatTurns: state.chatTurns.map((turn, at) => (at === index ? { ...turn, [column]: answer } : turn)) })),
  clearChat: () => set({ chatTurns: [] }),
});
