/**
 * The API key of the OpenAI-compatible endpoint, kept in this origin's localStorage only. It is
 * read at the moment a run builds its HTTP client, in the app; it never enters the store, a share
 * link, or the sandbox (whose opaque origin cannot read this storage either).
 */

const API_KEY_STORAGE = 'tabrl.endpoint.apiKey';

/** The stored API key, or '' when none. */
export function readApiKey(): string {
  try {
    return localStorage.getItem(API_KEY_STORAGE) ?? '';
  } catch {
    return '';
  }
}

/** Stores the API key (an empty key removes it). */
export function writeApiKey(key: string): void {
  if (key) localStorage.setItem(API_KEY_STORAGE, key);
  else localStorage.removeItem(API_KEY_STORAGE);
}
