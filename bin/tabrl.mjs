#!/usr/bin/env node
// The `tabrl` command. It runs the TypeScript sources directly (through tsx), so `npx tabrl` works
// right after `npm install` with no build step to remember.
import { register } from 'tsx/esm/api';

register();
// A reader that stops early (`tabrl generate … | head`) closes the pipe: stop quietly, as Unix tools
// do, instead of dying on an unhandled EPIPE with Node's stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}
process.setSourceMapsEnabled(true);
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
