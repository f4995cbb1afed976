#!/usr/bin/env node
// The `tabrl` command. It runs the TypeScript sources directly (through tsx), so `npx tabrl` works
// right after `npm install` with no build step to remember.
import { register } from 'tsx/esm/api';

register();
process.setSourceMapsEnabled(true);
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
