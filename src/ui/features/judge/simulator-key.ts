/**
 * The simulator endpoint's API key, kept in this origin's localStorage only, apart from the policy's
 * and the judge's keys. It is read when a run builds the simulator's client, in the app; it never
 * enters a store, a share link, or the sandbox (the sandbox only gets a client whose calls come back here).
 */
import { storedApiKey } from '../models/api-key.ts';

const simulatorKey = storedApiKey('tabrl.simulator.apiKey');

/** The stored simulator API key, or '' when none. */
export const readSimulatorApiKey = simulatorKey.read;

/** Stores the simulator API key (an empty key removes it). */
export const writeSimulatorApiKey = simulatorKey.write;
