/**
 * The API keys of the OpenAI-compatible endpoints, kept in this origin's localStorage only. A key is
 * read at the moment a run builds its HTTP client, in the app; it never enters the store, a share
 * link, or the sandbox (whose opaque origin cannot read this storage either).
 */

/** One key kept under a localStorage entry: `read` gives '' when there is none (or no storage), `write` of '' removes it. */
export interface StoredApiKey {
  read(): string;
  write(key: string): void;
}

/** The key stored under `storageKey`. */
export function storedApiKey(storageKey: string): StoredApiKey {
  return {
    read: () => {
      try {
        return localStorage.getItem(storageKey) ?? '';
      } catch {
        return '';
      }
    },
    write: (key) => {
      if (key) localStorage.setItem(storageKey, key);
      else localStorage.removeItem(storageKey);
    },
  };
}

const endpointKey = storedApiKey('tabrl.endpoint.apiKey');

/** The stored API key of the policy's endpoint, or '' when none. */
export const readApiKey = endpointKey.read;

/** Stores the policy endpoint's API key (an empty key removes it). */
export const writeApiKey = endpointKey.write;
