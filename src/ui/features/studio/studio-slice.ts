/**
 * The studio slice: documents and the task-synthesis run, imported traces, the calibration of the
 * open environment, and the audit (with the criteria proposed from it), kept under `studio`; the
 * studio's panels and actions (studio-actions.ts) are its only writers.
 */
import type { StateCreator } from 'zustand';
import type { PlaygroundState } from '../../store/index.ts';
import type { AuditResult, Criterion, FidelityRound, SynthesisProgress, SynthesisReport, SynthesizedTask, TaskCalibration, TraceParse, VerifiedPlantedTask } from '../../../envs/studio/index.ts';

/** Which model plays a studio role: the offline heuristic rules, the Policy card's choice, or the Judge card's. */
export type StudioRoleSource = 'heuristic' | 'policy' | 'judge';

/** A document given to the studio (dropped file or pasted text). */
export interface StudioDocumentEntry {
  name: string;
  text: string;
  /** 'separate' for pasted text: each paragraph becomes its own passage. */
  paragraphs?: 'join' | 'separate';
}

/** Where a long studio job is. */
export type StudioJobStatus = 'idle' | 'running' | 'done' | 'failed' | 'cancelled';

/** The "Tasks from documents" run. */
export interface SynthesisState {
  status: StudioJobStatus;
  progress: SynthesisProgress | null;
  /** Every candidate decided so far, kept or rejected. */
  tasks: SynthesizedTask[];
  report: SynthesisReport | null;
  error: string | null;
}

/** A calibration of the open environment's training tasks. */
export interface CalibrationState {
  status: StudioJobStatus;
  environment: string | null;
  done: number;
  total: number;
  tasks: TaskCalibration[];
  error: string | null;
}

/** A proposed criterion and whether the person keeps it. */
export interface ProposedCriterion {
  criterion: Criterion;
  accepted: boolean;
}

/** The audit of an evaluation's or a training run's rollouts. */
export interface AuditState {
  status: StudioJobStatus;
  /** What was audited, in words ("the evaluation of judged-writing: 20 rollouts"). */
  subject: string | null;
  result: AuditResult | null;
  error: string | null;
  proposing: boolean;
  proposed: ProposedCriterion[];
  /** What happened to the accepted criteria (added to the file, or why not). */
  criteriaNote: string | null;
  /** The code to paste when the criteria could not be added to the file automatically. */
  criteriaSnippet: string | null;
}

/** The simulated tools of imported traces: fidelity per round, and tasks planted backwards. */
export interface ToolSimulationState {
  status: StudioJobStatus;
  /** What runs or ran last. */
  job: 'fidelity' | 'plant' | null;
  /** Fidelity rounds on the held-out calls (without their examples). */
  rounds: Omit<FidelityRound, 'examples'>[];
  planted: VerifiedPlantedTask[];
  error: string | null;
}

/** The Studio tab's sections. */
export type StudioSection = 'documents' | 'traces' | 'calibrate' | 'audit';

/** The studio's state. */
export interface StudioState {
  /** The section the Studio tab shows. */
  section: StudioSection;
  documents: StudioDocumentEntry[];
  generator: StudioRoleSource;
  solver: StudioRoleSource;
  /** Open-book (and closed-book) attempts per candidate. */
  k: number;
  questionsPerChunk: number;
  synthesis: SynthesisState;
  traces: { fileName: string; parse: TraceParse } | null;
  tracesError: string | null;
  /** Who simulates the traces' tools: the scripted nearest-record simulator (offline) or the Judge card's model, lent like the judge. */
  simulator: 'scripted' | 'judge';
  toolSimulation: ToolSimulationState;
  calibrationK: number;
  /** Who is calibrated against: the Policy card's model, or the offline scripted student (generated files only). */
  calibrationPolicy: 'policy' | 'student';
  calibrationTasks: number;
  keep: [number, number];
  calibration: CalibrationState;
  auditSource: 'evaluation' | 'training';
  audit: AuditState;
}

/** The studio's state before anything ran. */
const INITIAL_STUDIO: StudioState = {
  section: 'documents',
  documents: [],
  generator: 'heuristic',
  solver: 'heuristic',
  k: 3,
  questionsPerChunk: 3,
  synthesis: { status: 'idle', progress: null, tasks: [], report: null, error: null },
  traces: null,
  tracesError: null,
  simulator: 'scripted',
  toolSimulation: { status: 'idle', job: null, rounds: [], planted: [], error: null },
  calibrationK: 4,
  calibrationPolicy: 'policy',
  calibrationTasks: 20,
  keep: [0, 1],
  calibration: { status: 'idle', environment: null, done: 0, total: 0, tasks: [], error: null },
  auditSource: 'evaluation',
  audit: { status: 'idle', subject: null, result: null, error: null, proposing: false, proposed: [], criteriaNote: null, criteriaSnippet: null },
};

/** A change to the studio's state: the fields to merge, or a function of the state that returns them. */
export type StudioUpdate = Partial<StudioState> | ((state: StudioState) => Partial<StudioState>);

/** Studio state in the store. */
export interface StudioSlice {
  studio: StudioState;
  /** Merges `update` into the studio's state. */
  setStudio(update: StudioUpdate): void;
}

/** Creates the studio slice (nothing ran yet). */
export const createStudioSlice: StateCreator<PlaygroundState, [], [], StudioSlice> = (set) => ({
  studio: { ...INITIAL_STUDIO },
  setStudio: (update) => set((state) => ({ studio: { ...state.studio, ...(typeof update === 'function' ? update(state.studio) : update) } })),
});
