/**
 * A short creative-writing task scored by a judge: RL without a verifiable reward.
 *
 * Task: 'Write a two-line poem about rain that uses the word "lantern".' The reply is the poem
 * itself (no tags). A JudgeRubric asks a judge model for a 0–10 grade ("Score: 8" → 0.8).
 *
 * The judge client is injectable (`loadEnvironment({ judgeClient, judgeModel })`): any ChatClient,
 * e.g. an API model or the in-tab model. With none, the environment uses `HeuristicJudgeClient`, a
 * transparent offline stand-in that grades only the checkable constraints (two lines, the word,
 * the topic, line length); it is not a judge of quality, so that the environment runs offline and
 * in tests. A judge that replies without a score scores 0 and the error is recorded.
 *
 * Scoring: `judgeReward` 1 (the judge's grade in [0, 1]); `mentionsWordMetric` and
 * `twoLinesMetric` (weight 0) check the constraints directly, so a policy that games the judge
 * shows up as a high judge score with failing constraints. Passing = judge score ≥ 0.8. Also
 * exports `judgedWritingExpertPolicy`, which writes a poem that meets every constraint.
 */
import {
  SingleTurnEnv,
  JudgeRubric,
  Parser,
  type ChatClient,
  type ChatCompletion,
  type ChatRequest,
  type Environment,
  type RewardContext,
  type ScriptedPolicy,
  type Task,
  readArgs,
} from '../index.ts';
import { EVAL_SEED_OFFSET, generateTasks, type Rng } from './random.ts';

// ---------------------------------------------------------------- dataset

const TOPICS = ['rain', 'the moon', 'a cat', 'the sea', 'winter', 'a train', 'bread', 'a garden', 'the wind', 'a city', 'coffee', 'a river', 'snow', 'a bicycle', 'the stars', 'a library'];
const WORDS = ['lantern', 'silver', 'whisper', 'orange', 'clock', 'feather', 'window', 'thunder', 'honey', 'shadow', 'paper', 'velvet', 'mirror', 'candle', 'echo', 'salt'];

/** Arguments of the judged-writing environment. */
export interface JudgedWritingArgs {
  /** The judge; default: the offline `HeuristicJudgeClient`. */
  judgeClient?: ChatClient;
  /** Model name sent to the judge (default "default"). */
  judgeModel?: string;
  /** Training tasks (default 100, drawn from 256 topic and word pairs). */
  numTasks?: number;
  /** Held-out tasks (default 20). */
  numEvalTasks?: number;
  seed?: number;
  /** Seed of the evaluation set (default seed + 1000003). */
  evalSeed?: number;
}

/** What a judged-writing task carries in `info`. */
export interface JudgedWritingInfo extends Record<string, unknown> {
  topic: string;
  word: string;
}

const QUESTION = /^Write a two-line poem about (.+) that uses the word "([^"]+)"\.$/;

function makeTask(rng: Rng): Task {
  const info: JudgedWritingInfo = { topic: rng.pick(TOPICS), word: rng.pick(WORDS) };
  return { question: `Write a two-line poem about ${info.topic} that uses the word "${info.word}".`, info, task: 'judged-writing' };
}

// ---------------------------------------------------------------- judge

/** The judge's instructions; {question} and {response} are filled in by the JudgeRubric. */
export const WRITING_JUDGE_PROMPT = `You are grading a short poem.

Task:
{question}

Poem:
{response}

Grade from 0 to 10 how well the poem follows the task (exactly two lines, about the topic, uses the required word) and how vivid it is. Reply with the grade alone, like "Score: 7".`;

/** Non-empty lines of a text. */
function linesOf(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** Whether `text` contains `phrase` as whole words, ignoring case. */
function mentions(text: string, phrase: string): boolean {
  const escaped = phrase.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`\\b${escaped}\\b`).test(text.toLowerCase());
}

/**
 * The heuristic grade of a poem, 0–10: 4 for exactly two lines (1 for one or three), 3 for the
 * required word, 2 for the topic's main word, 1 when each line has 3–12 words.
 */
export function gradePoemHeuristically(poem: string, topic: string, word: string): number {
  const lines = linesOf(poem);
  let grade = lines.length === 2 ? 4 : lines.length === 1 || lines.length === 3 ? 1 : 0;
  if (mentions(poem, word)) grade += 3;
  if (mentions(poem, topic.split(' ').at(-1)!)) grade += 2;
  if (
    lines.length > 0 &&
    lines.every((line) => {
      const n = line.split(/\s+/).length;
      return n >= 3 && n <= 12;
    })
  )
    grade += 1;
  return grade;
}

/**
 * An offline stand-in judge, as a ChatClient: it reads the task and poem out of
 * `WRITING_JUDGE_PROMPT` and replies "Score: N" from `gradePoemHeuristically`. It checks the
 * constraints only and cannot judge quality; a prompt it cannot read gets a reply without a score.
 */
export class HeuristicJudgeClient implements ChatClient {
  readonly chat = {
    completions: {
      create: async (request: ChatRequest): Promise<ChatCompletion> => {
        const prompt = request.messages.at(-1)?.content ?? '';
        const match = /Task:\n([\s\S]*?)\n\nPoem:\n([\s\S]*?)\n\nGrade from/.exec(prompt);
        const task = match ? QUESTION.exec(match[1]!.trim()) : null;
        const content = match && task ? `Score: ${gradePoemHeuristically(match[2]!, task[1]!, task[2]!)}` : 'I cannot read a task and a poem in this prompt.';
        return { id: 'heuristic-judge', model: request.model, choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] };
      },
    },
  };
}

// ---------------------------------------------------------------- rewards

const JUDGE_WEIGHT = 1;

/** 1 when the poem uses the required word (a metric: the constraint checked without the judge). */
export function mentionsWordMetric({ completion, parser, info }: RewardContext): number {
  const poem = parser.parseAnswer(completion);
  return poem !== undefined && mentions(poem, (info as JudgedWritingInfo).word) ? 1 : 0;
}

/** 1 when the poem has exactly two non-empty lines (a metric). */
export function twoLinesMetric({ completion, parser }: RewardContext): number {
  return linesOf(parser.parseAnswer(completion) ?? '').length === 2 ? 1 : 0;
}

// ---------------------------------------------------------------- environment

/** Builds the judged-writing environment; the judge defaults to the offline HeuristicJudgeClient. */
export default function loadEnvironment(args: JudgedWritingArgs = {}): Environment {
  const read = readArgs('judged-writing', args);
  const judgeClient = args.judgeClient ?? new HeuristicJudgeClient();
  if (typeof judgeClient !== 'object' || judgeClient === null || typeof judgeClient.chat?.completions?.create !== 'function') {
    read.fail(
      `judgeClient must be a chat client given by code (an object with chat.completions.create), got ${judgeClient === null ? 'null' : typeof judgeClient}; leave it out of JSON arguments to use the offline judge`,
    );
  }
  const judgeModel = read.string('judgeModel', { default: 'default' });
  const numTasks = read.wholeNumber('numTasks', { default: 100, min: 0 });
  const numEvalTasks = read.wholeNumber('numEvalTasks', { default: 20, min: 0 });
  const seed = read.wholeNumber('seed', { default: 0 });
  const evalSeed = read.wholeNumber('evalSeed', { default: seed + EVAL_SEED_OFFSET });
  const dataset = generateTasks({ count: numTasks, seed, make: makeTask });
  const rubric = new JudgeRubric({ judgeClient, judgeModel, judgePrompt: WRITING_JUDGE_PROMPT, weight: JUDGE_WEIGHT }).addMetric(mentionsWordMetric, 'check').addMetric(twoLinesMetric, 'check');
  return new SingleTurnEnv({
    name: 'judged-writing',
    dataset,
    evalDataset: generateTasks({ count: numEvalTasks, seed: evalSeed, make: makeTask, exclude: dataset }),
    systemPrompt: 'Reply with the poem only.',
    parser: new Parser(),
    rubric,
    passThreshold: 0.8,
  });
}

// ---------------------------------------------------------------- expert

/** A scripted expert: a two-line poem on the topic that uses the word (a demonstration of the format, not of art). */
export const judgedWritingExpertPolicy: ScriptedPolicy = (messages) => {
  const question = messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
  const task = QUESTION.exec(question.trim());
  if (!task) throw new Error('judgedWritingExpertPolicy: the question is not a judged-writing task');
  const [, topic, word] = task;
  return `I think of ${topic} when the day grows still,\na ${word} glows softly on the window sill.`;
};
