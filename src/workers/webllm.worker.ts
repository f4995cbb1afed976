/**
 * The WebLLM worker: hosts WebLLM's engine (its own worker handler and message protocol, not comlink)
 * so that model loading and generation never block the page. Started only by `loadWebLLM` in
 * webllm-client.ts, which is imported lazily; the main bundle never contains WebLLM.
 */
import { WebWorkerMLCEngineHandler } from '@mlc-ai/web-llm';

const handler = new WebWorkerMLCEngineHandler();
self.onmessage = (event: MessageEvent) => handler.onmessage(event);
