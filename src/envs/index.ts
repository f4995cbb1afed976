/**
 * The TabRL environment API: what environment files import as `tabrl`. Environments, rubrics,
 * parsers, chat clients and evaluation; nothing here touches the DOM, WebGPU or Node. The
 * environment studio (task synthesis, simulated tools, calibration, audits, criteria judges) is its
 * own entry, `tabrl/studio` (src/envs/studio/index.ts), which environment files import beside this one.
 */
export type { Message, ToolCall, ToolSchema, Task, SamplingArgs, State, Trajectory, TurnRecord, TurnTokens, RolloutError, RolloutErrorSource, StopReason, FinishReason } from './types.ts';
export type { ChatClient, ChatRequest, ChatCompletion, ChatChoice, ChatClientErrorKind } from './client.ts';
export { ChatClientError } from './client.ts';
export { Environment, type EnvironmentOptions, type RolloutOptions } from './environment.ts';
export { MultiTurnEnv, type MultiTurnEnvOptions, type StopCondition } from './multiturn-env.ts';
export { SingleTurnEnv, type SingleTurnEnvOptions } from './singleturn-env.ts';
export { ToolEnv, defineTool, type Tool, type ToolState, type ToolEnvOptions } from './tool-env.ts';
export {
  Rubric,
  RubricGroup,
  METRIC_KINDS,
  type MetricKind,
  type RewardContext,
  type RewardFunction,
  type GroupRewardFunction,
  type TurnRewardFunction,
  type WeightedReward,
  type WeightedGroupReward,
  type WeightedTurnReward,
  type RubricScore,
  type RubricOptions,
} from './rubric.ts';
export { JudgeRubric, fillTemplate, DEFAULT_JUDGE_PROMPT, type JudgeRubricOptions } from './judge-rubric.ts';
export { parseJudgeScore, judgeScaleOf, describeJudgeScale, DEFAULT_JUDGE_SCALE, type JudgeScale } from './judge-score.ts';
export { Parser, XMLParser, ThinkParser, type XMLField, type XMLParserOptions, type ParsedFields, type ThinkParsed } from './parser.ts';
export { ScriptedClient, type ScriptedPolicy, type ScriptedReply } from './scripted-client.ts';
export { MAX_TIMEOUT_MS, OpenAIHttpClient, type OpenAIHttpClientOptions } from './openai-http-client.ts';
export {
  evaluate,
  summarizeRollouts,
  passAtKEstimate,
  meanStd,
  type EvaluateOptions,
  type EvaluateProgress,
  type EvaluationResult,
  type EvaluationSummary,
  type RolloutRecord,
  type MeanStd,
} from './evaluate.ts';
export { assistantMessages, lastAssistantText, completionText } from './messages.ts';
export { toPlainData } from './plain-data.ts';
export { readArgs, type ArgReader, type NumberLimits } from './env-args.ts';
/** The built-in environments by name: `loadBuiltinEnvironment('countdown', { difficulty: 4 })` in an environment file wraps one (e.g. over fewer tasks with `withTasks` from `tabrl/studio`). */
export { loadBuiltinEnvironment, isBuiltinEnvironment, BUILTIN_ENVIRONMENT_NAMES, type BuiltinEnvironmentName, type BuiltinEnvironmentArgs } from './builtin/index.ts';
