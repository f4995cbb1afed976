/**
 * The judge endpoint's API key, kept in this origin's localStorage only, apart from the policy's
 * key. It is read when a run builds the judge's client, in the app; it never enters a store, a
 * share link, or the sandbox (the sandbox only gets a client whose calls come back here).
 */

const JUDGE_KEY_STORAGE = 'tabrl.judge.apiKey';

/** The stored judge API key, or '' when none. */
export function readJudgeApiKey(): string {
  try {
    return localStorage.getItem(JUDGE_KEY_STORAGE) ?? '';
  } catch {
    return '';
  }
}

/** Stores the judge API key (an empty key removes it). */
export function writeJudgeApiKey(key: string): void {
  if (key) localStorage.setItem(JUDGE_KEY_STORAGE, key);
  else localStorage.removeItem(JUDGE_KEY_STORAGE);
}
