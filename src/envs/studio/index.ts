/**
 * The environment studio: building environments for tasks without a verifier — tasks from documents
 * (grounded synthesis) and from traces (their tool calls kept, the tools simulated from the recorded calls), difficulty calibration, reward-hack audits, criteria judges
 * and rubric extraction. Plain library code over ChatClients (no files, no network of its own), so
 * the CLI (`tabrl synth`, `tasks from-traces`, `calibrate`, `audit`) and the playground share it.
 */
export { chunkDocuments, chunkDocument, EmptyDocumentError, type StudioDocument, type Chunk, type ChunkOptions } from './chunking.ts';
export { parseCandidateList, type CandidatePair, type CandidateParse, type MalformedItem } from './candidate-json.ts';
export { parseJsonLeniently } from './lenient-json.ts';
export { normalizeAnswer, extractFinalAnswer, answersMatch } from './answer-match.ts';
export { JudgeError, askJudge, toJudgeError, parseYesNo, type JudgeErrorKind, type JudgeTarget } from './judge-call.ts';
export {
  synthesizeTasks,
  generatorPrompt,
  solverPrompt,
  answerMatchPrompt,
  ANSWER_MATCH_JUDGE_PROMPT,
  ANSWER_MATCH_JUDGE_MAX_TOKENS,
  PASSAGE_OPEN,
  type SynthesisOptions,
  type SynthesisResult,
  type SynthesisReport,
  type SynthesisProgress,
  type SynthesizedTask,
  type TaskSource,
  type RejectionCode,
} from './synthesize.ts';
export { synthesizedTaskLine, synthesisReportJson, keptTasks, qaEnvironmentFile, type QaEnvironmentFileOptions } from './task-files.ts';
export { tasksFromTraces, traceTaskLine, type TraceTask, type TraceParse } from './traces.ts';
export { readTraceConversation, toolTurnProblem, type TraceConversation } from './trace-messages.ts';
export { toolRecordsOf, toolSchemasFor, parseArguments, type ToolRecord } from './tool-records.ts';
export { argumentSimilarity, canonicalJson, nearestRecords, type ScoredRecord } from './tool-retrieval.ts';
export {
  ToolSimulator,
  SimulatorError,
  simulatorPrompt,
  checkSimulatedResult,
  hashText,
  SIMULATOR_CALL_HEADING,
  SIMULATOR_TASK_LINE,
  type SimulatedCall,
  type SimulatedBackend,
  type SimulatorCorrection,
  type SimulatorPromptParts,
  type ToolSimulatorOptions,
} from './tool-simulator.ts';
export { ScriptedSimulatorClient, answerSimulatorPrompt, SCRIPTED_SIMULATOR_NO_RECORD } from './scripted-simulator.ts';
export { applyEpisodeWrites, failedWriteResult, isWriteTool, writtenFieldNames, type WrittenFieldNames } from './backend-writes.ts';
export { SimulatedToolEnv, episodeKey, type SimulatedToolState, type SimulatedToolEnvOptions } from './simulated-tool-env.ts';
export {
  splitHeldOut,
  resultsEqual,
  fieldAgreement,
  equivalencePrompt,
  measureFidelity,
  refineSimulator,
  type FidelityRow,
  type FidelityExample,
  type FidelityRound,
  type HeldOutSplit,
  type FidelityOptions,
  type RefineOptions,
} from './fidelity.ts';
export { plantedEnvironmentTask, verifyBackwardsTasks, PLANTED_SYSTEM_PROMPT, type VerifiedPlantedTask, type VerifyBackwardsOptions } from './backwards.ts';
export { plantBackwardsTasks, PLANT_KINDS, type PlantedTask, type PlantKind } from './planting.ts';
export { plantedPathOf, plantedPathPolicy, PLANTED_WRITE_REPLY, type PlantedPath } from './planted-path.ts';
export { plantedGoalOf, reachedPlantedGoal, reachedStateReward, type PlantedGoal } from './planted-goal.ts';
export { plantedQuestionPrompt, requiredMentions, writePlantedQuestions, type PlantedQuestionOptions, type WrittenQuestion } from './planted-questions.ts';
export { HeuristicToolSolverClient, HEURISTIC_TOOL_SOLVER_UNKNOWN } from './heuristic-tool-solver.ts';
export { simulatedEnvironmentFile, type SimulatedEnvironmentFileOptions } from './simulated-env-file.ts';
export { readSimulatorRecord, simulatorFlags, simulatorHeader, withSimulatorHeader, withoutSimulatorHeader, type SimulatorRecord } from './simulator-record.ts';
export {
  calibrate,
  calibrateRecords,
  calibrationLabel,
  checkKeepBand,
  learnability,
  calibrationLine,
  passRateHistogram,
  withTasks,
  calibratedEnvironmentFile,
  calibratedBuiltinEnvironmentFile,
  type CalibrationLabel,
  type TaskCalibration,
  type CalibrateOptions,
  type CalibrationResult,
} from './calibrate.ts';
export {
  audit,
  auditCriteriaExamples,
  auditRolloutsFromRecords,
  formatAuditReport,
  parseResultsJsonl,
  toAuditRollout,
  hindsightPrompt,
  reviewSample,
  type AuditRollout,
  type AuditDetector,
  type AuditFinding,
  type AuditReview,
  type FlaggedRollout,
  type AuditResult,
  type AuditOptions,
} from './audit.ts';
export { CriteriaRubric, gateByCriteria, criteriaPrompt, parseCriteriaVerdicts, type Criterion, type CriterionVerdict, type CriteriaRubricOptions } from './criteria-rubric.ts';
export { proposeCriteria, proposeCriteriaPrompt, criteriaRubricSnippet, slug, type CriteriaExample, type ProposeCriteriaOptions } from './propose-criteria.ts';
export { HeuristicStudioClient, createHeuristicStudioClients, type HeuristicRole } from './heuristic-clients.ts';
export { aggregatePanelScores, itemAgreement, panelAgreement, PANEL_AGGREGATIONS, PANEL_YES_AT, type PanelAggregation, type PanelAgreement } from './panel-agreement.ts';
export { JudgePanelClient, splitRollouts, panelRolloutVotes, formatPanelReport, type PanelJudge, type PanelCall, type PanelReport, type PanelRolloutVotes } from './judge-panel.ts';
export {
  redTeam,
  redTeamTarget,
  environmentRedTeamTarget,
  describeRewardWeights,
  redTeamCriteriaExamples,
  formatRedTeamReport,
  attackerPrompt,
  rubricDescription,
  RedTeamError,
  type RedTeamRole,
  type RedTeamCandidate,
  type RedTeamFinding,
  type RedTeamOptions,
  type RedTeamReport,
  type RedTeamTarget,
} from './red-team.ts';
export { HeuristicAttackerClient, ATTACKER_VOCABULARY } from './heuristic-attacker.ts';
export {
  buildReviewQueue,
  decideReviewItems,
  mergeCriteria,
  reviewQueueJsonl,
  parseReviewQueue,
  reviewItemExample,
  removeTasksFromEnvironmentFile,
  REVIEW_KINDS,
  EDGE_WIDTH,
  LOW_FIDELITY,
  type ReviewKind,
  type ReviewItem,
  type ReviewSources,
  type SplitRollout,
} from './review-queue.ts';
export { measuredPassRates, passRateCounts, poolRefreshRecord, refreshTaskPool, type PoolRefreshOptions, type PoolRefreshMetrics, type PoolRefreshRecord, type TaskPool } from './pool-refresh.ts';
export { checkPoolRules, DEFAULT_POOL_RULES, type PoolRules, type RetireLimit } from './pool-rules.ts';
