/**
 * The judge endpoint's API key, kept in this origin's localStorage only, apart from the policy's
 * key. It is read when a run builds the judge's client, in the app; it never enters a store, a
 * share link, or the sandbox (the sandbox only gets a client whose calls come back here).
 */
import { storedApiKey } from '../models/api-key.ts';

const judgeKey = storedApiKey('tabrl.judge.apiKey');

/** The stored judge API key, or '' when none. */
export const readJudgeApiKey = judgeKey.read;

/** Stores the judge API key (an empty key removes it). */
export const writeJudgeApiKey = judgeKey.write;
