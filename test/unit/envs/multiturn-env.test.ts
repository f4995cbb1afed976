import { describe, expect, test } from 'vitest';
import { MultiTurnEnv, Rubric, ScriptedClient, SingleTurnEnv, XMLParser, type Message, type RewardContext, type State } from '../../../src/envs/index.ts';

/** A guessing game: the model guesses a number; the env answers higher/lower and ends on a hit. */
interface GuessState extends State {
  guesses: number[];
  won: boolean;
  feedback: string[];
}

class GuessEnv extends MultiTurnEnv<GuessState> {
  override setupState(state: State): GuessState {
    return { ...state, guesses: [], won: false, feedback: [] };
  }
  override envResponse(messages: Message[], state: GuessState): Message[] {
    const guess = Number(this.parser.parseAnswer(messages));
    state.guesses.push(guess);
    const target = Number(state.answer);
    const reply = guess === target ? 'correct!' : guess < target ? 'higher' : 'lower';
    state.won = guess === target;
    state.feedback.push(reply);
    return [{ role: 'user', content: reply }];
  }
  override isCompleted(_messages: Message[], state: GuessState): boolean {
    return state.won;
  }
}

const winReward = (ctx: RewardContext<GuessState>) => (ctx.state.won ? 1 : 0);
const makeEnv = (maxTurns = 4) =>
  new GuessEnv({
    name: 'guess',
    dataset: [{ question: 'Guess my number (1-10).', answer: '7' }],
    systemPrompt: 'Answer with <guess>n</guess>.',
    parser: new XMLParser(['guess']),
    rubric: new Rubric<GuessState>({ funcs: [winReward] }),
    maxTurns,
  });

describe('MultiTurnEnv', () => {
  test('a scripted policy plays to a win; the final move is processed and its feedback kept', async () => {
    const client = new ScriptedClient(['<guess>5</guess>', '<guess>8</guess>', '<guess>7</guess>']);
    const trajectory = await makeEnv().rollout(client, makeEnv().dataset[0]!, { temperature: 0.5 }, { taskIndex: 0 });

    expect(trajectory.stopReason).toBe('completed');
    expect(trajectory.truncated).toBe(false);
    expect(trajectory.reward).toBe(1);
    expect(trajectory.state.guesses).toEqual([5, 8, 7]);
    expect(trajectory.state.feedback).toEqual(['higher', 'lower', 'correct!']);
    expect(trajectory.completion.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(trajectory.completion.at(-1)!.content).toBe('correct!');
    expect(trajectory.prompt).toEqual([
      { role: 'system', content: 'Answer with <guess>n</guess>.' },
      { role: 'user', content: 'Guess my number (1-10).' },
    ]);
    expect(trajectory.turns).toHaveLength(3);
    // The model saw the growing conversation, with sampling arguments passed through.
    expect(client.requests[2]!.messages).toHaveLength(6);
    expect(client.requests[0]!.temperature).toBe(0.5);
  });

  test('the turn limit ends a losing game, and the last move is still processed', async () => {
    const client = new ScriptedClient(['<guess>1</guess>']);
    const trajectory = await makeEnv(3).rollout(client, makeEnv().dataset[0]!);
    expect(trajectory.stopReason).toBe('max_turns');
    expect(trajectory.truncated).toBe(true);
    expect(trajectory.state.guesses).toEqual([1, 1, 1]);
    expect(trajectory.state.feedback).toHaveLength(3);
    expect(trajectory.reward).toBe(0);
  });

  test('a client failure is recorded and the rollout is still scored', async () => {
    const client = { chat: { completions: { create: async () => { throw new Error('connection reset'); } } } };
    const trajectory = await makeEnv().rollout(client, makeEnv().dataset[0]!);
    expect(trajectory.stopReason).toBe('error');
    expect(trajectory.errors).toEqual([{ source: 'client', name: 'chat.completions.create', message: 'connection reset' }]);
    expect(trajectory.scores).toEqual({ winReward: 0 });
  });

  test('an envResponse that throws ends the rollout with an env error instead of crashing', async () => {
    class BrokenEnv extends MultiTurnEnv {
      override envResponse(): Message[] {
        throw new Error('bad game state');
      }
    }
    const env = new BrokenEnv({ name: 'broken', dataset: [{ question: 'hi' }] });
    const trajectory = await env.rollout(new ScriptedClient(['hello']), env.dataset[0]!);
    expect(trajectory.stopReason).toBe('error');
    expect(trajectory.errors[0]).toMatchObject({ source: 'env', message: 'bad game state' });
    expect(trajectory.completion).toEqual([{ role: 'assistant', content: 'hello' }]);
  });

  test('an aborted signal stops before the next model call', async () => {
    const controller = new AbortController();
    const client = new ScriptedClient(() => {
      controller.abort();
      return '<guess>2</guess>';
    });
    const trajectory = await makeEnv().rollout(client, makeEnv().dataset[0]!, {}, { signal: controller.signal });
    expect(trajectory.stopReason).toBe('aborted');
    expect(client.requests).toHaveLength(1);
  });

  test('token data from the client is kept per turn', async () => {
    const tokens = { promptIds: [1, 2], completionIds: [3], completionLogprobs: [-0.5] };
    const client = {
      chat: { completions: { create: async () => ({ id: 'x', model: 'm', choices: [{ index: 0, message: { role: 'assistant' as const, content: 'hi' }, finish_reason: 'stop' as const, tokens }] }) } },
    };
    const env = new SingleTurnEnv({ dataset: [{ question: 'q' }] });
    const trajectory = await env.rollout(client, env.dataset[0]!);
    expect(trajectory.turns[0]!.tokens).toEqual(tokens);
  });
});

describe('SingleTurnEnv', () => {
  test('one reply, then scoring; a task prompt wins over question + system prompt', async () => {
    const exactReward = (ctx: RewardContext) => (ctx.parser.parseAnswer(ctx.completion) === ctx.answer ? 1 : 0);
    const env = new SingleTurnEnv({
      dataset: [{ prompt: [{ role: 'user', content: 'say ok' }], answer: 'ok' }, { question: 'say no', answer: 'no' }],
      systemPrompt: 'Be brief.',
      rubric: new Rubric({ funcs: [exactReward] }),
    });
    const client = new ScriptedClient(['ok', 'yes']);
    const first = await env.rollout(client, env.dataset[0]!);
    const second = await env.rollout(client, env.dataset[1]!);
    expect(first.prompt).toEqual([{ role: 'user', content: 'say ok' }]);
    expect(second.prompt[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect([first.reward, second.reward]).toEqual([1, 0]);
    expect(first.stopReason).toBe('completed');
    expect(client.requests).toHaveLength(2);
  });

  test('a task with neither prompt nor question is an error naming the environment', () => {
    const env = new SingleTurnEnv({ name: 'empty', dataset: [{}] });
    expect(() => env.formatPrompt({})).toThrow('empty: a task needs a prompt or a question');
  });
});
