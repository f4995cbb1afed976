/**
 * The playground's lessons, for a browser tutorial or a class: each a title, a few short steps for
 * a learner, and a preset that "Start lesson" applies (the environment file, policy, in-tab model,
 * mode and settings). The same table renders the lesson panel and docs/lessons.md
 * (lessons-markdown.ts; a unit test keeps the file in step). Step text uses a small markup:
 * `code`, **bold**, and fenced ``` blocks.
 */
import type { BuiltinEnvironmentName } from '../../../envs/builtin/index.ts';
import {
  DEFAULT_LESSON_ENVIRONMENT,
  DEFAULT_LESSON_MODEL,
  DEFAULT_LESSON_OPTIONS,
  PARCEL_LESSON_MODEL,
  PARCEL_LESSON_OPTIONS,
  PARCEL_LESSON_SETTINGS,
  WORDLE_LESSON_ENVIRONMENT,
  WORDLE_LESSON_MODEL,
  WORDLE_LESSON_OPTIONS,
  WORDLE_LESSON_SETTINGS,
} from '../../../rl/lesson.ts';
import type { EvaluationSettings } from '../evaluation/evaluation-slice.ts';
import type { PolicyKind } from '../policy/policy-slice.ts';
import type { RunMode, TrainingSettings } from '../training/training-slice.ts';
import type { LessonSourceName } from './lesson-sources.ts';

/** Where a lesson's environment file comes from: a built-in's source, or a lesson source (src/ui/features/lessons/sources/) that may borrow a built-in's expert. */
export type LessonEnvironment = { kind: 'builtin'; builtin: BuiltinEnvironmentName } | { kind: 'source'; source: LessonSourceName; expertFrom?: BuiltinEnvironmentName };

/** What "Start lesson" sets up. */
export interface LessonPreset {
  /** The saved environment the lesson opens (created the first time, reopened after). */
  fileName: string;
  environment: LessonEnvironment;
  /** Arguments passed to `loadEnvironment(args)`. */
  args: Record<string, unknown>;
  policy: PolicyKind;
  /** The in-tab engine's model ('tiny', a shipped model's id such as 'nano' or 'nano-2m', or a preset id such as 'smollm2-135m-instruct'). */
  inTabModel: string;
  mode: RunMode;
  /** Evaluation settings that differ from the panel's defaults. */
  evaluation: Partial<Omit<EvaluationSettings, 'argsJson'>>;
  /** Warm-up and GRPO settings that differ from the defaults. */
  training: Partial<TrainingSettings>;
}

/** One lesson. */
export interface Lesson {
  /** 1-based; `#lesson=<id>` opens it. */
  id: number;
  title: string;
  /** One sentence: what the learner will be able to do. */
  goal: string;
  /** Short steps, in order, in the markup above. */
  steps: string[];
  preset: LessonPreset;
}

const LESSON_ARGS: Record<string, unknown> = { ...DEFAULT_LESSON_ENVIRONMENT.args };
const WORDLE = WORDLE_LESSON_OPTIONS;
const PARCEL = PARCEL_LESSON_OPTIONS;

/** The lessons, in order. */
export const LESSONS: readonly Lesson[] = [
  {
    id: 1,
    title: 'Write a reward function and evaluate it',
    goal: 'Read an environment, run it against a scripted policy, and add a reward function of your own.',
    steps: [
      'Press **Start lesson**. The editor opens `Lesson 1 · reverse-text`, your own copy of the built-in reverse-text environment. Read it top to bottom: the tasks (reverse a short text), a parser that reads the answer between `<reversed>` tags, the reward functions, and `loadEnvironment`, which puts them together.',
      'The policy is the **Scripted expert**: a small program that answers every task correctly. It tests your rewards, not a model. Press **Evaluate**: 10 held-out tasks, 2 answers each. Every answer should pass, with reward 1.200 (`lcsReward` 1 × weight 1, plus the format reward 1 × weight 0.2).',
      "Add a reward function. Above `loadEnvironment`, write:\n```ts\n/** 1 when the answer has no spaces at its ends. */\nexport function tidyAnswerReward({ completion, parser }: RewardContext): number {\n  const answer = parser.parseAnswer(completion) ?? '';\n  return answer === answer.trim() ? 1 : 0;\n}\n```\nthen add `.addReward(tidyAnswerReward, 0.5)` after the other `addReward` calls in the rubric at the bottom (the one with `parser.formatReward()`). The editor underlines mistakes as you type, and Evaluate refuses to run a file with errors.",
      'Press **Evaluate** again. The summary table lists `tidyAnswerReward` with its weight and mean, and the reward is now the weighted sum (1.700). Open **Rollouts** to read each answer with the score every function gave it.',
      'Now make a reward that is wrong on purpose, e.g. return 1 only when the answer is longer than 30 characters, and evaluate. The expert is still right, but its reward drops: a reward function is a claim about what a good answer is, and the evaluation with a known-good policy is how you check that claim before you train on it.',
    ],
    preset: {
      fileName: 'Lesson 1 · reverse-text',
      environment: { kind: 'builtin', builtin: 'reverse-text' },
      args: {},
      policy: 'expert',
      inTabModel: DEFAULT_LESSON_MODEL,
      mode: 'evaluate',
      evaluation: { numTasks: 10, rolloutsPerTask: 2, concurrency: 4, maxTokens: 512, temperature: 0.7, seed: 0 },
      training: {},
    },
  },
  {
    id: 2,
    title: 'Warm up and train nano, and read the curves',
    goal: 'Train a model in this tab, first by imitation (SFT), then by reinforcement learning (GRPO), and read what the charts say.',
    steps: [
      'Press **Start lesson**. The environment is reverse-text in its compact form (the text in, the reversed text out, no tags), with arguments `{"compact":true,"minLength":4,"maxLength":8,"numTasks":400}`. The policy is the in-tab model **nano**: a 0.32M-parameter transformer over bytes that ships with the app (loaded from its own files, nothing downloaded), pretrained by `scripts/nano/pretrain.ts` on text the repository generates — word lists, Wordle games and a few hundred reversals. It is trained here on WebGPU.',
      'Baseline: choose **Evaluate** and press it. nano has seen some reversals, so it gets part of most answers right but few exactly: reward about 0.4. The run that the warm-up starts keeps this evaluation as its "before" (the same weights).',
      '**Warm up** (the mode the lesson chose) and press Start. The scripted expert makes 400 demonstrations and the model learns to copy them with 300 steps of supervised fine-tuning. Open **Training**: the SFT loss falls. This takes a few minutes on a laptop GPU, longer on a CPU-only software adapter.',
      "Choose **Train** and press Start: GRPO, 60 steps (the **GRPO steps** field). Each step samples 8 answers to each of 4 tasks, scores them in the sandbox, and pushes the model towards the answers that scored above their group's mean.",
      "Read the curves. **Reward** should rise, and its dashed ± std band narrow as the 8 answers to a task agree. **Pass rate** counts exact reversals. **Entropy** falls as the model grows sure of itself. **KL** stays at 0 here: the lesson trains without a KL penalty (**KL β** 0); set KL β to e.g. 0.05 and the chart shows how far the model moves from where GRPO started, while the penalty holds it back. Under the charts, the latest step's answers are coloured token by token: green likely, red unlikely.",
      'Evaluate again (Evaluate mode): the run lists each evaluation under its charts, the baseline first, so you can compare before and after. Measured headless with these settings (`npm run bench:learn -- --backend cpu`, 32 held-out tasks, greedy): reward 0.413 before, 0.917 after the warm-up, 0.960 after GRPO, with 0 %, 66 % and 78 % exact reversals. Every run is kept in the **Runs** tab, where you can compare two of them.',
      'Now the same lesson from nothing: pick **Tiny, from scratch** in the model picker (random weights, about 0.1M parameters), press **New run** in the Training tab and run the warm-up and GRPO again. Its baseline is 0 (random bytes); measured the same way it reaches 0.770 after the warm-up and 0.790 after GRPO, with 19 % exact reversals. Compare the two runs in **Runs**: pretraining is most of what the small model knows.',
    ],
    preset: {
      fileName: 'Lesson 2 · reverse-text (nano)',
      environment: { kind: 'builtin', builtin: 'reverse-text' },
      args: LESSON_ARGS,
      policy: 'in-tab',
      inTabModel: DEFAULT_LESSON_MODEL,
      mode: 'warmup',
      evaluation: { numTasks: DEFAULT_LESSON_OPTIONS.evalTasks ?? 32, rolloutsPerTask: 1, maxTokens: DEFAULT_LESSON_OPTIONS.maxTokens, temperature: 0, seed: 0 },
      // The defaults are the default lesson's table (src/rl/lesson.ts).
      training: {},
    },
  },
  {
    id: 3,
    title: 'Train a real small model: SmolLM2-135M-Instruct with LoRA',
    goal: 'Fine-tune a real (downloaded) instruction model on a built-in task with GRPO and LoRA adapters.',
    steps: [
      'Press **Start lesson**. The environment is arithmetic at difficulty 1: one-step word problems, answered with a number in `<answer>` tags. The policy is the in-tab model **SmolLM2-135M-Instruct**, a 135-million-parameter model that already follows instructions.',
      'Start lesson also loads the model. The first time it is downloaded, about 270 MB, with progress and a Cancel button under the policy. The browser caches it, so the next visit starts at once. It runs on your GPU through WebGPU; on a machine without one it is very slow.',
      'Press **Evaluate** for a baseline: 20 held-out problems, greedy answers. Open **Rollouts** and read a few: does it use the tags? Is the arithmetic right?',
      'Choose **Train** and press Start. GRPO trains small LoRA adapters (rank-16 matrices beside every attention and MLP projection) while the 135 M base weights stay frozen: far less memory, and the run stays close to the original model. 30 steps of 4 problems × 4 answers each.',
      'Watch **Reward** and **Pass rate** in the Training tab, then evaluate again and compare with the baseline. The format reward usually rises first (the model learns the tags), then correctness.',
    ],
    preset: {
      fileName: 'Lesson 3 · arithmetic (SmolLM2)',
      environment: { kind: 'builtin', builtin: 'arithmetic' },
      args: { difficulty: 1, numTasks: 400, numEvalTasks: 40 },
      policy: 'in-tab',
      inTabModel: 'smollm2-135m-instruct',
      mode: 'evaluate',
      evaluation: { numTasks: 20, rolloutsPerTask: 1, concurrency: 4, maxTokens: 128, temperature: 0, seed: 0 },
      training: { grpoSteps: 30, tasksPerStep: 4, groupSize: 4, grpoLr: 2e-4, maxTokens: 128, maxAsync: 1, temperature: 1, checkpointEvery: 10 },
    },
  },
  {
    id: 4,
    title: 'Judge-scored rewards, and how reward hacking shows up',
    goal: 'Reward a task that has no checkable answer with a judge, and learn to spot a policy that games the judge.',
    steps: [
      'Press **Start lesson**. The task: write a two-line poem about a topic that uses a given word. There is no single right answer, so a **judge** grades it: a `JudgeRubric` sends the poem to a judge and reads "Score: 7" as 0.7. Here the judge is a deliberately gullible rule, `gullibleGrade`: a point per 20 characters and a point per "poetic" word. It never checks the two lines or the word.',
      'Two metrics sit beside the judge at weight 0: `mentionsWordMetric` and `twoLinesMetric`. They do not change the reward; they check the constraints directly, so you can see when the judge is being fooled.',
      'Press **Evaluate** with the scripted expert. Its poems meet every constraint (both metrics 1.0), yet the judge gives them only 0.6, so none passes. Open **Rollouts** to read them.',
      "Now let a model chase this judge: choose the **in-tab model** (Start lesson set it to **tiny**, the byte-level model that starts from random weights: nothing to download, and nothing it knew before to hold it back) and **Train** it from its fresh weights. (A warm-up keeps only demonstrations that pass, and this judge passes none of the expert's poems: **Warm up** says so and trains nothing.) GRPO follows `judgeReward` only. Watch the Training tab and the rollouts under the charts: the `twoLinesMetric` and `mentionsWordMetric` curves are drawn beside the reward. If the reward rises while they stay low or fall, as answers grow longer, run past two lines or pile up poetic words, the policy is hacking the judge: the reward went up, the poems did not get better. A tiny model drifts slowly; give it more GRPO steps if the curves have not moved after 40.",
      'Fix the reward: in the editor, set `MENTIONS_WORD_WEIGHT` and `TWO_LINES_WEIGHT` to 0.5 (or cap the length points in `gullibleGrade`), press **New run** in the Training tab and train again. In the **Runs** tab, tick both runs and compare their reward curves.',
      'Catch the hack without reading every poem: open the **Studio** tab, **Audit**, choose **Training run** (or **Last evaluation** after an evaluation) and press **Audit**. Detectors flag rollouts whose `judgeReward` is high while a weight-0 metric scored 0 (`metric-disagrees`), and one completion given to many tasks (`collapse`); then the judge of the **Judge** card (the offline heuristic by default, which checks the constraints the task states) reads the top-scoring rollouts and says whether each earned its reward. Press **Propose criteria from these**, keep the yes/no questions that say what the task wants, and **Add to the environment**: a copy of the file opens where `gateByCriteria(rubric, new CriteriaRubric(...))` makes the criteria a gate on the reward, each criterion its own metric.',
      "The gate: the reward becomes the judge's reward × the weighted fraction of criteria met. Evaluate the copy with the policy that hacked: the gullible judge still pays its long line 1.0, but it meets none of the criteria, so its reward is 0 and it no longer passes. A poem that keeps the constraints meets them all and keeps exactly the reward the judge gave it: a vivid one (the judge pays 0.8 or more) still passes. (The expert's plain poems still get only 0.6: the gate stops the hack, it does not make this judge fair; the weights of the fix above do that.) Adding the criteria with weight 1 on top of the judge would not do it: the hack would still collect the judge's 1.0 and pass the 0.8 threshold.",
      'A real judge model: pick **OpenAI-compatible endpoint** (or WebLLM, or the in-tab model) in the **Judge** card. The environment gets it as `args.judgeClient`; its calls come out of the sandbox to this page, so the key stays here and the sandbox keeps no network. A judge that cannot answer (unreachable, a 401) stops the run with a message rather than scoring 0. From a terminal: `tabrl eval` / `tabrl train` with `--judge-base-url URL --judge-model NAME --judge-api-key-env VAR`. Model judges can be hacked too; keep the weight-0 metrics beside them, and audit.',
    ],
    preset: {
      fileName: 'Lesson 4 · gullible judge',
      environment: { kind: 'source', source: 'gullible-judge', expertFrom: 'judged-writing' },
      args: {},
      policy: 'expert',
      inTabModel: 'tiny',
      mode: 'evaluate',
      evaluation: { numTasks: 10, rolloutsPerTask: 1, concurrency: 4, maxTokens: 160, temperature: 0.7, seed: 0 },
      training: { grpoSteps: 40, tasksPerStep: 4, groupSize: 8, maxTokens: 160, temperature: 1 },
    },
  },
  {
    id: 5,
    title: 'From your documents to a calibrated environment',
    goal: 'Turn documents into grounded question/answer tasks, keep the ones a policy can learn from, and audit the rewards.',
    steps: [
      'Press **Start lesson**: it sets the scripted expert and small settings, and opens `Lesson 5 · judged-writing`, a task with no checkable answer that the last step audits. Then open the **Studio** tab. In **Tasks from documents**, press **Add the sample document** (`aldermoor.md`, an invented harbour town, so no model knows its facts) or drop your own `.md` / `.txt` files, or paste text.',
      "Keep **Generator** and **Solver** on **Offline heuristic**: transparent rules, not models. The generator writes fill-in-the-blank questions from the passage's sentences; the solver answers each question k times *with* the passage (open book) — a candidate is kept only when those answers match its reference — and then *without* it (closed book). Press **Make tasks**. Read the table: kept candidates, and rejected ones with their reason — here a duplicate (the sample repeats a sentence); a model generator also produces replies that are not JSON and questions the solver cannot answer, each rejected with its reason. On invented facts the open-book pass rate is 100% and the closed-book one 0%: that gap is what grounding in the document adds.",
      'Press **Open as environment**. The editor opens `studio-tasks`: the kept tasks in `TASKS` (each with its source document and character span), a closed-book question per task, and `exactMatchReward` (1 when the final answer equals the reference after normalising case, punctuation and articles). It type-checks as it is; `tabrl eval` runs the same file.',
      'Calibrate it: **Studio** → **Calibrate**, **Policy** = **Scripted student (offline)**, **K rollouts** 8, press **Calibrate**. Every task is tried 8 times. The student is a rule (it always knows numbers, knows names half the time, and nothing else), so the labels are easy to check: numbers are **too easy** (pass rate 1: GRPO learns nothing from a group whose rewards are all equal), other words **too hard** (never passes: nothing to learn either), names **learnable**. Learnability is 4p(1−p). Change the keep band and watch the labels and the histogram move.',
      'Press **Use learnable tasks**: `studio-tasks (learnable)` opens with only those tasks. That is the file to train on: every group of rollouts has rewards that differ, so every GRPO step has a signal.',
      "With a real model: choose an **OpenAI-compatible endpoint** in the **Policy** card (and one in the **Judge** card), set **Generator** and **Solver** to **The policy** or **The judge**, and make tasks from your own documents. Then calibrate the file against the Policy card's model, not the student. From a terminal the same steps are `tabrl synth`, `tabrl calibrate` and `tabrl audit` (docs/environment-studio.md).",
      'Audit before you train: pick `Lesson 5 · judged-writing` in the Environment menu and **Evaluate** it with the scripted expert, then **Studio** → **Audit** → **Last evaluation** → **Audit**. The detectors find nothing to flag and the judge finds each reviewed reward earned. Lesson 4 shows the same panel catching a policy that games its judge.',
    ],
    preset: {
      fileName: 'Lesson 5 · judged-writing',
      environment: { kind: 'builtin', builtin: 'judged-writing' },
      args: {},
      policy: 'expert',
      inTabModel: DEFAULT_LESSON_MODEL,
      mode: 'evaluate',
      evaluation: { numTasks: 10, rolloutsPerTask: 1, concurrency: 4, maxTokens: 160, temperature: 0.7, seed: 0 },
      training: {},
    },
  },
  {
    id: 6,
    title: 'Train a Wordle agent in this tab',
    goal: "Warm a small pretrained model up on a solver's Wordle games, then let GRPO train it on its own games, and measure whether RL beat the imitation on the game as played.",
    steps: [
      'Press **Start lesson**. The environment is Wordle in its compact form (`{"compact":true}`): each board is one short line, `s?a?e +rt -bcdl` — the green letters in place, `+` letters known to be in the word but not yet placed, `-` letters known not to be in it — and the model answers with a bare five-letter word. Secret words come from a 300-word list, which is also the game\'s dictionary (any other reply is "not a word"). 100 of the words are answers only GRPO\'s games have (practice answers), 100 those of the teacher\'s games, which GRPO plays too (demonstration answers), and 100 are never a training game\'s answer (held-out answers). The evaluation is the game as played (`"evalSplit":"fresh"`): 100 fresh games whose answers are drawn from the whole list, by seeds no training game uses; an answer may recur, as in the real game, where the answer list is public.',
      'The policy is the in-tab model **nano-wordle**: nano\'s 0.32M-parameter byte-level Llama, pretrained on the CPU by `scripts/nano/pretrain.ts` on lists of the game\'s words, lists of the words that fit a board, reverse-text, and 8000 games of the teacher below, all on the 100 demonstration answers and each played its own way, so it learned to read a board rather than to recite games, and has never seen a practice answer played (docs/nano.md, "nano-wordle"). It ships with the app (0.65 MB, no download). Press **Evaluate**: 100 fresh games, greedy. Open **Rollouts** to read the games turn by turn.',
      'Rewards: 1 for a win, up to 0.5 for winning in fewer turns, 0.2 × the share of valid words, 0.3 × the informed guesses (the second on) that fit the board they answered — as a share of those made when the game is won, of all five informed turns when it is lost, so turns given up to invalid moves count against it and quitting never pays more than playing on. `guessesMetric` and `compactInvalidGuessesMetric` (weight 0) count valid and invalid guesses, and `consistentGuessesMetric` (weight 0) is the share of informed guesses made that fit. A pass is a win.',
      'Choose **Warm up** and press Start. The teacher is a deliberately imperfect solver: it guesses a random pool word that fits the board, but on 30% of moves one that fits only the greens. It plays 400 games on the demonstration answers; the model imitates the ones it won for 10 gentle SFT steps (learning rate 2e-4). Evaluate again.',
      'Choose **Train** and press Start: GRPO plays 8 games for each of 8 words per step, 240 steps at learning rate 2e-4, on the practice and the demonstration answers (`"answers":"practice-and-demonstration"`): the teacher\'s games never had a practice answer, so only RL can learn those. The Training tab charts **Wordle: win rate**, **valid guesses per game** and **invalid guesses per game** beside the reward; under the charts each game of the latest step reads turn by turn, the model\'s guess (coloured by probability) followed by the board it got back.',
      "Evaluate once more and compare the measurements in the run's table. Is the gain RL's? Only if it beats the same time spent on more warm-up. Measured with these settings on the CPU, three seeds (BENCHMARKS.md, \"lesson 6 with nano-wordle\"; mean, with the seeds' range): greedy, nano-wordle wins 52 % of the fresh games before the warm-up (25 % sampled), 51 % after it (49–52 %; sampled 21–23 %), **69 % after GRPO (68–70 %; sampled 60–65 %)**, and **51 % (50–52 %; sampled 50–53 %) for the control**, the warm-up given GRPO's time instead (3104–3202 more SFT steps). GRPO ends 18.7 points above the control, with no overlap between the seeds and nearly three times the standard error of a difference of two win rates over 100 games. Along GRPO the fresh-game greedy win rate after the warm-up and every 40 steps reads 49, 47, 51, 66, 68, 68, 68 %; 52, 52, 57, 55, 63, 72, 70 %; 51, 52, 56, 65, 64, 71, 70 %: flat for about 80 steps, then up. Where it comes from: on games whose answer is a practice answer GRPO wins 64–76 % (the control 24–32 %, the warm-up 44–52 %), on demonstration answers 87–96 % (the control 91 %), and fewer moves are not words (12–14 % against 19–20 %). Imitation only drills the answers it was shown; RL learned answers nobody demonstrated, and to play the board more often.",
      'Generalisation: add `"evalSplit": "held-out"` to the arguments and evaluate again: one game per held-out answer, words no training game ever had. Measured greedy: 32 % before the warm-up (15 % sampled), 27–32 % after it, 28–38 % after GRPO (26–31 % sampled), 18–20 % for the control. Drilling the demonstration answers costs the control a third of its held-out wins; GRPO keeps them, and in two seeds of three adds some. (nano, which saw a fixed game per answer in pretraining, wins 24 % here, and neither training raised it: BENCHMARKS.md, "lesson 6 on the game as played".) Try paying for how each move is played too: add `"turnRewards": true` (each move scores 0.2 if it is a word and 0.3 more if it fits its board, credited to the move\'s own tokens).',
      'Time: headless on the CPU (`tabrl train wordle --lesson --backend cpu`, the fast backend on one core of a 2-core machine), the whole lesson — three evaluations of 100 games, 400 teacher games, 10 warm-up steps and 240 GRPO steps of 64 games (about 1.9 s each) — took 8 minutes, and ended at the seed-0 measurement above (52, 49, 68 %). On a laptop GPU it is estimated, not measured, to fit within 30 minutes (BENCHMARKS.md gives the estimate and what it rests on). The three-seed measurements, control included, took 16 minutes each.',
    ],
    preset: {
      fileName: 'Lesson 6 · Wordle (nano-wordle)',
      environment: { kind: 'builtin', builtin: 'wordle' },
      args: { ...WORDLE_LESSON_ENVIRONMENT.args },
      policy: 'in-tab',
      inTabModel: WORDLE_LESSON_MODEL,
      mode: 'evaluate',
      evaluation: { numTasks: WORDLE.evalTasks, rolloutsPerTask: 1, concurrency: 8, maxTokens: WORDLE.maxTokens, temperature: 0, seed: 0 },
      // Lesson 6's row of the table, as `tabrl train wordle --lesson` runs it.
      training: WORDLE_LESSON_SETTINGS,
    },
  },
  {
    id: 7,
    title: 'An agent for a tool you cannot call',
    goal: 'Simulate an API you cannot call from its logged traces, measure how faithful the simulation is, plant tasks backwards so that their rewards are verifiable, and evaluate and train a policy on them.',
    steps: [
      "Press **Start lesson**. The editor opens `Lesson 7 · Parcelo planted tasks`. Parcelo is a fictional parcel-tracking API: its support agent's conversations were logged with the agent's calls to three tools (`track_parcel`, `find_parcels`, `reschedule_delivery`), but the API cannot be called from here and nobody labelled the logs. `RECORDS` holds the 49 recorded calls. Every call a policy makes is answered by a **simulator** prompted with the tool's schema and the recorded calls closest to it: by default the scripted nearest-record simulator (offline: it answers with the recorded result of the same tool whose arguments are closest); the **Tool simulator** card under the Judge card lends a model instead (the Judge card's, the Policy card's, or an endpoint of its own), and the evaluation records which. The same call gets the same result within an episode and across a group of rollouts, and a write changes what later reads return: after `reschedule_delivery`, `track_parcel` shows the new date as the parcel's `eta`.",
      "How faithful is the simulator? Open **Studio** → **Tasks from traces** and press **Add the sample trace log** (`parcel-desk-traces.jsonl`, the same log). Its agent used tools, so the **Simulated tools** card appears. Keep the scripted simulator and press **Measure fidelity**: a quarter of each tool's recorded calls, 13 in all, is held out, and each is simulated from the rest and compared with the real result. Round 1: `track_parcel` 8 calls 100 % exact, `reschedule_delivery` 2 calls 0 %, `find_parcels` 3 calls 67 %; all tools 77 % exact and 82 % of JSON fields agreeing. Round 2 adds the three worst answers to every prompt as corrections and stays at 77 % / 82 %: retrieval is exact when the same call was recorded elsewhere in the log and cannot invent a parcel it never saw; corrections help a model simulator, not a lookup.",
      "Tasks planted backwards: production gave the logs no labels, but the simulated backend can be given any state. So the answer comes first: a call with a tracking id no record used is planted in the backend with a value in one field, and the task asks for that field, so the reward (exact match with the planted value) is verifiable. Press **Plant tasks and open**: 8 tasks are planted, and the offline solver (a rule that calls the tool the question names) tries each with the tools and without them (the closed-book test, for tools: a task it passes without a tool is rejected). 8 kept; `planted-tasks` opens, with each planted record in its task's `info.planted`.",
      'The lesson\'s file has all three kinds, the 32 tasks these records allow: 12 held out for evaluation (`EVAL_TASKS`, four of each kind) and 20 to train on (`TASKS`), and beside them 240 practice tasks (`PRACTICE_TASKS`, made by `practiceTasks(240, 7)` in the file) planted the same three ways with a fresh id drawn for each, so no id comes twice: remembering ids wins none of them, only copying the id the question names. Beside a planted field, a **chain**: "What is the eta for the tracking_id listed for customer ana.moreau-469?" plants a new customer whose `find_parcels` listing names a new parcel, whose `track_parcel` record holds the answer, so it takes two calls. A **write**: "Reschedule delivery: for the tracking_id listed for customer ben.okafor-379, set date to 2026-03-25." has no answer to match; `reachedStateReward` checks the state the episode reached (`info.goal`): the last `reschedule_delivery` of that parcel must carry that date. Partial credit, as verifiable: `firstCallReward` (weight 0.5) is 1 when the episode made the first call of the planted path, the right tool with the id the question names copied exactly, so a solved task scores 1.5 and passing still needs the answer or the reached state. From a terminal: `tabrl synth --backwards TRACES --kinds field,chain,write --simulator-model heuristic --solver-model heuristic --out DIR`, and `--generator-*` has a model write the questions.',
      'Evaluate: pick `Lesson 7 · Parcelo planted tasks` in the Environment menu again and press **Evaluate** with the in-tab model **nano-tools**: the 12 held-out tasks, greedy. Reward 0.000 and `usedToolsMetric` 1.000. nano-tools is nano\'s shape (0.32M parameters, the byte tokenizer) pretrained in two stages: first on chats that only say a value back, then on nano\'s corpus (Wordle games, word lists, reversed texts) with chats in which an assistant calls made-up tools, each call carrying an id from the question or an earlier result (docs/nano.md, "nano-tools"). So it already writes a well-formed call (a model without native tool calls calls one by writing `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`), but to tools this API does not have (`search_orders`, `list_orders`), with the customer\'s number copied and the rest of the id made up. Open **Rollouts** to read its replies. Trained now, every GRPO group would be flat (all rewards 0): no learning signal.',
      'So warm it up first. A planted task knows the calls that reach its answer, so it can write its own demonstration: choose **Warm up** with the teacher **Built-in expert**, which here plays each of the 260 training and practice tasks along its planted path (`find_parcels`, `track_parcel`, then the answer; for a write `reschedule_delivery` last, then "done") through the environment, in the harness\'s format: the tool list in the system turn, each call as `<tool_call>{...}</tool_call>`, the simulated results as tool turns. The 260 transcripts are the demonstrations (all pass), and 240 SFT steps of 4 train nano-tools on them (under four passes over them). From a terminal: save the file as the editor shows it and run `tabrl train FILE --lesson` (its environment is named `parcel-desk`, which picks this lesson\'s settings, `PARCEL_LESSON_SETTINGS` in src/rl/lesson.ts).',
      "Evaluate again, then choose **Train** (10 GRPO steps of 2 tasks × 4 answers at temperature 1) and evaluate once more. Measured headless with these settings (`npx tsx bench/lesson7.ts`: `tabrl train` on the lesson's file with `--lesson`, the CPU backend, seed 0; BENCHMARKS.md, \"lesson 7 with nano-tools\"), on the 12 held-out tasks, greedy: reward 0.000 before the warm-up, 0.917 after it and 0.833 after GRPO, with pass rate 0.000, 0.417 and 0.333, `usedToolsMetric` 1.000, 1.000 and 1.000, and `firstCallReward` 0.000, 1.000 and 1.000. The warm-up taught this API, and copying did the rest. Read the rollouts after training: every held-out episode walks its planted path, the question's id in the first call and, for a chain or a write, the listed `tracking_id` copied from the `find_parcels` result into the next call. What it gets wrong is the end: it answers every field question with the parcel's `eta` (so the five that ask for `location` fail), and every write sets 2026-03-27, whatever date the question asks for (right once in four). GRPO has a signal now (nano's groups were all flat): 4 of the 10 GRPO steps had only flat groups, the other 6 a group whose answers differed, but 10 steps of 8 answers do not yet teach which field a question asks for; BENCHMARKS.md has a longer run. The same file trains any policy: an **OpenAI-compatible endpoint** in the Policy card (a model with tool calling), or from a terminal `tabrl eval` / `tabrl train` on the file with `--simulator-base-url URL --simulator-model NAME` (a model lent as the simulator) or `--simulator-model heuristic`.",
    ],
    preset: {
      fileName: 'Lesson 7 · Parcelo planted tasks',
      environment: { kind: 'source', source: 'parcel-desk' },
      args: {},
      policy: 'in-tab',
      inTabModel: PARCEL_LESSON_MODEL,
      mode: 'evaluate',
      evaluation: { numTasks: PARCEL.evalTasks, rolloutsPerTask: 1, concurrency: 4, maxTokens: PARCEL.maxTokens, temperature: 0, seed: 0 },
      // Lesson 7's row of the table, as `tabrl train FILE --lesson` runs it.
      training: PARCEL_LESSON_SETTINGS,
    },
  },
];

/** The lesson with this id, if there is one. */
export function lessonById(id: number): Lesson | undefined {
  return LESSONS.find((lesson) => lesson.id === id);
}
