// What a model call from environment code may ask: the request is rebuilt from the fields a policy or
// judge may set, with the host's model, and failures come back without the endpoint's text.
import { expect, test } from 'vitest';
import { filterModelRequest, MAX_REQUEST_TOKENS, ModelErrorLedger, modelCallFailure } from '../../../src/cli/model-call-filter.ts';

const messages = [{ role: 'user', content: 'Is 7 prime? Answer yes or no.' }];

test('model, n, stream and unknown fields do not pass; messages, tools and sampling within limits do', () => {
  const filtered = filterModelRequest({
    model: 'gpt-expensive', n: 128, stream: true, user: 'x', extra_body: { a: 1 }, messages,
    temperature: 0.7, top_p: 0.9, max_tokens: 256, stop: ['\n\n'], seed: 3, logprobs: true,
    tools: [{ type: 'function', function: { name: 'lookup', description: 'Look a word up', parameters: { type: 'object' } } }],
  }, 'policy-model');
  expect(filtered).toEqual({
    ok: true,
    request: {
      model: 'policy-model', messages, temperature: 0.7, top_p: 0.9, max_tokens: 256, stop: ['\n\n'], seed: 3, logprobs: true,
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Look a word up', parameters: { type: 'object' } } }],
    },
  });
});

test.each([
  ['unlimited max_tokens', { messages, max_tokens: 10 ** 9 }, new RegExp(`max_tokens must be an integer from 1 to ${MAX_REQUEST_TOKENS}`)],
  ['a temperature of 50', { messages, temperature: 50 }, /temperature must be a number from 0 to 2/],
  ['a message without content', { messages: [{ role: 'user' }] }, /messages\[0\] must be/],
  ['a role that does not exist', { messages: [{ role: 'root', content: 'x' }] }, /messages\[0\] must be/],
  ['no messages', { prompt: 'x' }, /messages must be an array/],
])('%s is refused with a message saying what is allowed', (_what, request, expected) => {
  const filtered = filterModelRequest(request, 'm');
  expect(filtered.ok).toBe(false);
  if (!filtered.ok) expect(filtered.message).toMatch(expected);
});

test('extra fields inside a message are dropped', () => {
  const filtered = filterModelRequest({ messages: [{ role: 'user', content: 'hi', headers: { authorization: 'x' } }] }, 'm');
  expect(filtered.ok && filtered.request.messages).toEqual([{ role: 'user', content: 'hi' }]);
});

test('a failure carries its kind and status and none of the endpoint text', () => {
  const failure = modelCallFailure('auth', 401);
  expect(failure).toMatchObject({ ok: false, kind: 'auth', status: 401 });
  expect(failure.message).toBe('the model call failed (HTTP 401): the endpoint refused the key');
});

test('the ledger gives environment code a stand-in and puts the real text back into what it recorded', () => {
  const ledger = new ModelErrorLedger();
  const real = 'http://127.0.0.1:9/v1/chat/completions refused the API key (HTTP 401): {"authorization":"Bearer sk-1"}; check the key';
  const standIn = ledger.record(real, 'auth', 401);
  expect(standIn.message).not.toContain('sk-1');
  expect(ledger.restore(`judgeReward threw: the judge refused the request (auth): ${standIn.message}; check the judge's URL`)).toBe(`judgeReward threw: the judge refused the request (auth): ${real}; check the judge's URL`);
  expect(ledger.restore('an unrelated error')).toBe('an unrelated error');
});
