/** The transfer slice: what came in from files (an imported model, imported warm-up data), the demonstrations of the last warm-up (for download), and the last import/export message. */
import type { StateCreator } from 'zustand';
import type { Message } from '../../../envs/index.ts';
import type { PlaygroundState } from '../../store/index.ts';

/** Warm-up transcripts and where they came from. */
export interface WarmupData {
  /** 'imported': a JSONL file the next warm-up trains on instead of making demonstrations; 'made': the expert's demonstrations of the last warm-up. */
  origin: 'imported' | 'made';
  /** The file's name, or the environment the demonstrations were made on. */
  name: string;
  transcripts: Message[][];
}

/** The outcome of the last import or export, shown under the Files card. */
export interface TransferMessage {
  kind: 'ok' | 'failed';
  text: string;
}

/** Transfer state. */
export interface TransferSlice {
  /** What the engine holds when it was loaded from a file (e.g. "weights from tiny-model.zip"); null when it holds a run's weights. */
  importedModel: string | null;
  /** JSONL chats the next warm-up trains on (instead of the expert's demonstrations). */
  importedWarmup: WarmupData | null;
  /** The demonstrations the last warm-up trained on. */
  lastWarmup: WarmupData | null;
  transferMessage: TransferMessage | null;
  setImportedModel(label: string | null): void;
  setImportedWarmup(data: WarmupData | null): void;
  setLastWarmup(data: WarmupData | null): void;
  setTransferMessage(message: TransferMessage | null): void;
}

/** Creates the transfer slice. */
export const createTransferSlice: StateCreator<PlaygroundState, [], [], TransferSlice> = (set) => ({
  importedModel: null,
  importedWarmup: null,
  lastWarmup: null,
  transferMessage: null,
  setImportedModel: (importedModel) => set({ importedModel }),
  setImportedWarmup: (importedWarmup) => set({ importedWarmup }),
  setLastWarmup: (lastWarmup) => set({ lastWarmup }),
  setTransferMessage: (transferMessage) => set({ transferMessage }),
});
