// Node module-resolution hook: `tabrl` (and `tabrl/...` is not offered) resolves to this checkout's
// environment library, so an environment file in any folder can `import { SingleTurnEnv } from 'tabrl'`.
const LIBRARY_URL = new URL('../src/envs/index.ts', import.meta.url).href;

/** Resolves the bare specifier 'tabrl'; everything else goes to the next resolver. */
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'tabrl') return { url: LIBRARY_URL, shortCircuit: true };
  return nextResolve(specifier, context);
}
