#!/usr/bin/env node
// The `tabrl` command. It runs the TypeScript sources directly (tsx), so `npx tabrl` works right
// after `npm install` with no build step, and maps `import ... from 'tabrl'` in environment files
// anywhere on disk to this checkout's environment library.
import { register } from 'node:module';
import { register as registerTypeScript } from 'tsx/esm/api';

registerTypeScript();
// Registered after tsx, so it resolves first: 'tabrl' → src/envs/index.ts, which tsx then compiles.
register('./resolve-tabrl.mjs', import.meta.url);

const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
