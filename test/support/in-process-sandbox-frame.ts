/**
 * A sandbox frame inside the test's own process, for the app's real bridge (`openSandbox`'s
 * `createFrame`): the real sandbox API on one end of a MessageChannel. Importing this module closes
 * every channel it opened after each test of the importing file.
 */
import * as Comlink from 'comlink';
import { afterEach } from 'vitest';
import { createSandboxApi } from '../../src/workers/sandbox/sandbox-api.ts';

const ports: MessagePort[] = [];
afterEach(() => {
  for (const port of ports.splice(0)) port.close();
});

/** A `createFrame` whose frames run the real sandbox API in this process, loading `loadEnvironment` as the environment module's default export. */
export function inProcessSandboxFrame(loadEnvironment: () => unknown) {
  return async () => {
    const channel = new MessageChannel();
    ports.push(channel.port1, channel.port2);
    Comlink.expose(createSandboxApi(() => ({ default: loadEnvironment })), channel.port2 as unknown as Comlink.Endpoint);
    return { port: channel.port1, onError: () => {}, dispose: () => channel.port1.close() };
  };
}
