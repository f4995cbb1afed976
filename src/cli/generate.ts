/**
 * `tabrl generate <model-dir | tiny> (--prompt TEXT | --messages JSON)`: samples chat completions
 * from a Hugging Face-style model folder (config.json, model.safetensors, tokenizer.json,
 * tokenizer_config.json) or from the `tiny` preset (a seeded random tiny Llama over the byte
 * tokenizer), through the same LocalChatClient that environments use, on the CPU backend, and
 * prints each completion with its token ids and logprobs. `--temperature 0` decodes greedily.
 */
import type { Message } from '../envs/types.ts';
import { LocalChatClient } from '../gpu/inference/local-chat-client.ts';
import { CliError } from './cli-error.ts';
import { parseFlags } from './flags.ts';
import { openModel, parseBackendName } from './open-model.ts';
import { shippedModelIds } from '../models/shipped-models.ts';
import { errorMessage } from '../common/error-message.ts';

/** Usage text of `tabrl generate`. */
const GENERATE_USAGE = `Usage: tabrl generate <model-dir | tiny | ${shippedModelIds().join(' | ')}> (--prompt TEXT | --messages JSON) [options]

Samples chat completions from a model folder (config.json, model.safetensors, tokenizer.json,
tokenizer_config.json) or from "tiny" (a seeded random tiny Llama with the byte tokenizer) or a shipped model
(${shippedModelIds().join(', ')}: the pretrained byte-level folders the app ships under public/models), on the
CPU backend, and prints each completion with its token ids and per-token logprobs.

Options:
  --prompt TEXT           one user message
  --messages JSON         a conversation: [{"role": "system", "content": "…"}, {"role": "user", "content": "…"}]
  -n N                    completions to sample (default 1)
  --temperature T         sampling temperature; 0 decodes greedily (default 1)
  --top-p P               nucleus sampling threshold in (0, 1] (default 1, off)
  --top-k K               keep the K most likely tokens (default 0, off)
  --max-tokens N          most tokens per completion (default 64)
  --stop STRING           stop string (repeatable)
  --seed S                sampling seed: the same seed reproduces the completions
  --model-seed S          weights seed of "tiny" (default 0)
  --backend B             cpu (default: the fast WASM backend), cpu-reference (the plain-TypeScript oracle) or webgpu
                          (Dawn: the KV-cache decoder runs on the GPU)
  --json                  print one JSON object instead of text`;

/** Runs `tabrl generate`; returns the exit code. */
export async function runGenerate(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    {
      args: argv,
      allowPositionals: true,
      options: {
        prompt: { type: 'string' },
        messages: { type: 'string' },
        n: { type: 'string', short: 'n' },
        temperature: { type: 'string' },
        'top-p': { type: 'string' },
        'top-k': { type: 'string' },
        'max-tokens': { type: 'string' },
        stop: { type: 'string', multiple: true },
        seed: { type: 'string' },
        'model-seed': { type: 'string' },
        backend: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    { '--model': `the model is the first argument: tabrl generate <model-dir | tiny | ${shippedModelIds().join(' | ')}> --prompt TEXT` },
  );
  if (values.help) {
    console.log(GENERATE_USAGE);
    return 0;
  }
  const model = positionals[0];
  if (model === undefined || positionals.length > 1) throw new CliError(`give exactly one model (a folder or "tiny")\n\n${GENERATE_USAGE}`, 2);
  const messages = parseMessages(values.prompt, values.messages);
  const n = parseNumber(values.n, '-n', { integer: true, min: 1 }) ?? 1;
  const temperature = parseNumber(values.temperature, '--temperature', { min: 0 }) ?? 1;
  const topP = parseNumber(values['top-p'], '--top-p', { min: 0, max: 1 });
  const topK = parseNumber(values['top-k'], '--top-k', { integer: true, min: 0 });
  const maxTokens = parseNumber(values['max-tokens'], '--max-tokens', { integer: true, min: 1 }) ?? 64;
  const seed = parseNumber(values.seed, '--seed', { integer: true });
  const modelSeed = parseNumber(values['model-seed'], '--model-seed', { integer: true, min: 0 }) ?? 0;

  const { backend, tokenizer, createDecoder, device } = await openModel(model, { backend: parseBackendName(values.backend), seed: modelSeed });
  console.error(`${model} on ${device}`);
  const client = new LocalChatClient({ backend, tokenizer, model, ...(createDecoder ? { createDecoder } : {}) });
  let completion;
  try {
    completion = await client.chat.completions.create({
      model,
      messages,
      n,
      temperature,
      ...(topP !== undefined ? { top_p: topP } : {}),
      ...(topK !== undefined ? { top_k: topK } : {}),
      max_tokens: maxTokens,
      ...(values.stop !== undefined ? { stop: values.stop } : {}),
      ...(seed !== undefined ? { seed } : {}),
    });
  } catch (error) {
    throw new CliError(errorMessage(error));
  }

  const promptIds = completion.choices[0]?.tokens.promptIds ?? [];
  if (values.json) {
    console.log(
      JSON.stringify({
        model,
        prompt: tokenizer.decode(promptIds),
        prompt_ids: promptIds,
        choices: completion.choices.map((choice) => ({
          index: choice.index,
          text: choice.message.content,
          finish_reason: choice.finish_reason,
          token_ids: choice.tokens.completionIds,
          logprobs: choice.tokens.completionLogprobs,
        })),
        usage: completion.usage,
      }),
    );
    return 0;
  }
  console.log(`prompt (${promptIds.length} tokens): ${JSON.stringify(tokenizer.decode(promptIds))}`);
  for (const choice of completion.choices) {
    const { completionIds, completionLogprobs } = choice.tokens;
    console.log(`\n--- completion ${choice.index} (${choice.finish_reason}, ${completionIds.length} tokens) ---`);
    console.log(choice.message.content);
    console.log(`token ids: ${completionIds.join(' ')}`);
    console.log(`logprobs:  ${completionLogprobs.map((logprob) => logprob.toFixed(4)).join(' ')}`);
  }
  return 0;
}

/** Returns the conversation from --prompt or --messages (exactly one of them). */
function parseMessages(prompt: string | undefined, messagesJson: string | undefined): Message[] {
  if ((prompt === undefined) === (messagesJson === undefined)) throw new CliError(`give exactly one of --prompt and --messages\n\n${GENERATE_USAGE}`, 2);
  if (prompt !== undefined) return [{ role: 'user', content: prompt }];
  let value: unknown;
  try {
    value = JSON.parse(messagesJson!);
  } catch (error) {
    throw new CliError(`--messages is not valid JSON (${errorMessage(error)})`, 2);
  }
  const roles = ['system', 'user', 'assistant', 'tool'];
  const valid =
    Array.isArray(value) && value.length > 0 && value.every((m) => typeof m === 'object' && m !== null && roles.includes((m as Message).role) && typeof (m as Message).content === 'string');
  if (!valid) throw new CliError('--messages must be a non-empty JSON array of {"role": "system" | "user" | "assistant" | "tool", "content": "…"}', 2);
  return value as Message[];
}

/** Parses a numeric flag (undefined when absent), or throws a usage error naming the flag. */
function parseNumber(text: string | undefined, flag: string, { integer = false, min = -Infinity, max = Infinity }: { integer?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || (integer && !Number.isInteger(value)) || value < min || value > max) {
    const range = max < Infinity ? ` from ${min} to ${max}` : min > -Infinity ? ` ≥ ${min}` : '';
    throw new CliError(`${flag} must be ${integer ? 'an integer' : 'a number'}${range}, got "${text}"`, 2);
  }
  return value;
}
