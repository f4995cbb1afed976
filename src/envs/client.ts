/**
 * The policy seen from an environment: the part of OpenAI's `chat.completions.create` that a rollout
 * needs. The in-tab engine, WebLLM and any HTTP endpoint all implement it, so an environment never
 * knows which model it talks to.
 */
export { ChatClientError, type ChatChoice, type ChatClient, type ChatClientErrorKind, type ChatCompletion, type ChatRequest } from '../chat/protocol.ts';
