/** Types of the modules vite.config.ts generates, for the UI program (src/workers/sandbox/virtual-modules.d.ts declares them for the core one). */
declare module 'virtual:tabrl-sandbox-runtime' {
  /** The sandbox runtime (src/workers/sandbox/runtime.ts with src/envs) as the text of one classic IIFE script. */
  const source: string;
  export default source;
}

declare module 'virtual:tabrl-types' {
  /** The declarations of the `tabrl` API (and `tabrl/builtin/...`) as `declare module` blocks, for the editor. */
  const declarations: string;
  export default declarations;
}
