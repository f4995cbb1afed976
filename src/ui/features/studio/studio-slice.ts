/**
 * The studio slice: documents and the task-synthesis run, imported traces, the calibration of the
 * open environment, the audit (with the criteria proposed from it), the judge panel, the red team and
 * the review queue, kept under `studio`; the studio's panels and actions are its only writers.
 */
import type { StateCreator } from 'zustand';
import type { PlaygroundState } from '../../store/index.ts';
import type {
  AuditResult,
  Criterion,
  FidelityRound,
  PanelAggregation,
  RedTeamReport,
  ReviewItem,
  SynthesisProgress,
  SynthesisReport,
  SynthesizedTask,
  TaskCalibration,
  TraceParse,
  VerifiedPlantedTask,
} from '../../../envs/studio/index.ts';

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

/** One judge of the tab's panel: the Judge card's model, the Policy card's, or an OpenAI-compatible endpoint (no key) given here. */
export interface PanelJudgeEntry {
  source: 'judge' | 'policy' | 'endpoint';
  baseURL: string;
  model: string;
}

/** One rollout judged by the panel: what it said, its reward, each judge's score and their agreement. */
export interface PanelRollout {
  id: string;
  question: string;
  response: string;
  reward: number;
  /** Each judge's score (null where it gave none), in panel order. */
  scores: (number | null)[];
  agreement: number | null;
  split: boolean;
}

/** An evaluation of the open environment with the panel lent as its judge. */
export interface JudgePanelState {
  status: StudioJobStatus;
  environment: string | null;
  judges: string[];
  aggregation: PanelAggregation;
  calls: number;
  unscored: number;
  /** Judge replies with no score on the prompt's scale (a grade outside it, say): each a vote left out. */
  offScale: number;
  pairwise: number | null;
  fleissKappa: number | null;
  rollouts: PanelRollout[];
  error: string | null;
}

/** A red-team search of the open environment's reward. */
export interface RedTeamState {
  status: StudioJobStatus;
  /** Replies scored so far (the search's progress). */
  scored: number;
  report: RedTeamReport | null;
  error: string | null;
  /** What "Turn into criteria" did (or why not), and the code to paste when it could not edit the file. */
  criteriaNote: string | null;
  criteriaSnippet: string | null;
}

/** The review queue built from the studio's results, with each decision. */
export interface ReviewState {
  items: ReviewItem[];
  /** Criteria confirmed hacks became so far (merged by name). */
  criteria: Criterion[];
  /** The id of the item being decided (a judge call or a file edit in flight). */
  busy: string | null;
  note: string | null;
  error: string | null;
}

/** The Studio tab's sections. */
export type StudioSection = 'documents' | 'traces' | 'calibrate' | 'audit' | 'panel' | 'redteam' | 'review';

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
  toolSimulation: ToolSimulationState;
  calibrationK: number;
  /** Who is calibrated against: the Policy card's model, or the offline scripted student (generated files only). */
  calibrationPolicy: 'policy' | 'student';
  calibrationTasks: number;
  keep: [number, number];
  calibration: CalibrationState;
  auditSource: 'evaluation' | 'training';
  audit: AuditState;
  panelJudges: PanelJudgeEntry[];
  panelAggregation: PanelAggregation;
  judgePanel: JudgePanelState;
  /** Who attacks the reward: the offline heuristic attacker (a seeded random search), the policy, or the judge. */
  attacker: StudioRoleSource;
  /** Who reviews high-scoring replies in hindsight: none (they are listed unreviewed), the offline heuristic judge, the policy, or the judge. */
  reviewer: StudioRoleSource | 'none';
  redTeamRounds: number;
  redTeamPopulation: number;
  redTeam: RedTeamState;
  review: ReviewState;
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
  toolSimulation: { status: 'idle', job: null, rounds: [], planted: [], error: null },
  calibrationK: 4,
  calibrationPolicy: 'policy',
  calibrationTasks: 20,
  keep: [0, 1],
  calibration: { status: 'idle', environment: null, done: 0, total: 0, tasks: [], error: null },
  auditSource: 'evaluation',
  audit: { status: 'idle', subject: null, result: null, error: null, proposing: false, proposed: [], criteriaNote: null, criteriaSnippet: null },
  panelJudges: [
    { source: 'judge', baseURL: '', model: '' },
    { source: 'endpoint', baseURL: 'http://localhost:8001/v1', model: 'default' },
  ],
  panelAggregation: 'majority',
  judgePanel: { status: 'idle', environment: null, judges: [], aggregation: 'majority', calls: 0, unscored: 0, offScale: 0, pairwise: null, fleissKappa: null, rollouts: [], error: null },
  attacker: 'heuristic',
  reviewer: 'heuristic',
  redTeamRounds: 10,
  redTeamPopulation: 4,
  redTeam: { status: 'idle', scored: 0, report: null, error: null, criteriaNote: null, criteriaSnippet: null },
  review: { items: [], criteria: [], busy: null, note: null, error: null },
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
