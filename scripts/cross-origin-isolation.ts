/**
 * The headers that make the app's pages cross-origin isolated, so that the fast CPU backend's Web
 * Workers can share one WebAssembly.Memory (SharedArrayBuffer). Sent by `npm run dev`, `npm start`
 * (vite preview), the browser test project, and by static hosts through public/_headers.
 *
 * COEP is `require-corp` rather than `credentialless`: the app loads no cross-origin resource
 * without CORS (its model downloads, WebLLM's files and OpenAI-compatible endpoints are all CORS
 * fetches, which COEP lets through), its sandbox frame is served from the same origin with these
 * headers, and `require-corp` also isolates Safari, which does not implement `credentialless`.
 */

/** Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy for every response of the app. */
export const CROSS_ORIGIN_ISOLATION_HEADERS: Readonly<Record<string, string>> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};
