/**
 * Monaco, set up once for environment files: only the editor core, the features in
 * monaco-features.ts and the TypeScript language (ESM entry points, not the full `monaco-editor`
 * bundle); its web workers bundled by Vite (nothing from a CDN),
 * the TypeScript language service configured like the CLI's type-check of environment files, and
 * the `tabrl` API declarations (generated from src/envs at build time) added as an extra library,
 * so completion, hover docs and diagnostics work. Compiling for the sandbox also goes through the
 * language service's worker: it already holds TypeScript, so the app need not load a second copy.
 */
import * as monaco from 'monaco-editor/editor/editor.api';
import * as typescript from 'monaco-editor/languages/features/typescript/register';
import './monaco-features.ts';
import EditorWorker from 'monaco-editor/editor/editor.worker?worker';
import TypeScriptWorker from 'monaco-editor/languages/features/typescript/ts.worker?worker';
import tabrlDeclarations from 'virtual:tabrl-types';

export { monaco, typescript };

/** The path every environment model lives under; one model per saved environment. */
export const ENVIRONMENT_URI_PREFIX = 'file:///environments/';

/** Configures workers, compiler options and the `tabrl` types; safe to call more than once (Monaco is one per page: its environment, once set, says it is configured). */
export function setupMonaco(): typeof monaco {
  if (self.MonacoEnvironment) return monaco;
  self.MonacoEnvironment = {
    getWorker(_workerId: string, label: string) {
      return label === 'typescript' || label === 'javascript' ? new TypeScriptWorker() : new EditorWorker();
    },
  };
  typescript.typescriptDefaults.setCompilerOptions({
    strict: true,
    target: typescript.ScriptTarget.ES2020,
    // CommonJS output is what the sandbox runs: `require('tabrl')` resolves to its bundled copy.
    module: typescript.ModuleKind.CommonJS,
    moduleResolution: typescript.ModuleResolutionKind.NodeJs,
    lib: ['es2023', 'webworker'],
    allowNonTsExtensions: true,
    noEmitOnError: false,
    esModuleInterop: false,
    skipLibCheck: true,
    sourceMap: false,
  });
  typescript.typescriptDefaults.setDiagnosticsOptions({ noSemanticValidation: false, noSyntaxValidation: false });
  typescript.typescriptDefaults.setEagerModelSync(true);
  typescript.typescriptDefaults.addExtraLib(tabrlDeclarations, 'file:///node_modules/@types/tabrl/index.d.ts');
  return monaco;
}

/** A compile problem, 1-based line and column. */
export interface CompileProblem {
  line: number;
  column: number;
  message: string;
}

/** The result of compiling an environment model: CommonJS JavaScript, or the errors that block running it. */
export type CompileResult = { ok: true; code: string } | { ok: false; problems: CompileProblem[] };

/** How long compileModel waits for Monaco to set up its TypeScript mode before it gives up. */
const TYPESCRIPT_SETUP_TIMEOUT_MS = 10_000;

/**
 * Monaco's TypeScript worker getter. Monaco sets the TypeScript mode up lazily (a dynamic import once
 * the first TypeScript model is seen), and until then `getTypeScriptWorker` rejects with the string
 * "TypeScript not registered!" — which a compile right after a page opens (a share link's Run) can
 * meet. This waits for the set-up instead, and gives any other failure back at once.
 */
async function typeScriptWorkerGetter(): Promise<Awaited<ReturnType<typeof typescript.getTypeScriptWorker>>> {
  const deadline = Date.now() + TYPESCRIPT_SETUP_TIMEOUT_MS;
  for (;;) {
    try {
      return await typescript.getTypeScriptWorker();
    } catch (error) {
      const notYetSetUp = typeof error === 'string' && error.includes('not registered');
      if (!notYetSetUp) throw error;
      if (Date.now() > deadline) throw new Error(`The TypeScript checker did not start within ${TYPESCRIPT_SETUP_TIMEOUT_MS / 1000} s; reload the page.`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Type-checks the model and emits it as CommonJS through Monaco's TypeScript worker. */
export async function compileModel(model: monaco.editor.ITextModel): Promise<CompileResult> {
  const getWorker = await typeScriptWorkerGetter();
  const worker = await getWorker(model.uri);
  const fileName = model.uri.toString();
  const diagnostics = [...(await worker.getSyntacticDiagnostics(fileName)), ...(await worker.getSemanticDiagnostics(fileName))];
  const errors = diagnostics.filter((diagnostic) => diagnostic.category === 1);
  if (errors.length > 0) {
    return {
      ok: false,
      problems: errors.map((diagnostic) => {
        const position = model.getPositionAt(diagnostic.start ?? 0);
        const text = typeof diagnostic.messageText === 'string' ? diagnostic.messageText : diagnostic.messageText.messageText;
        return { line: position.lineNumber, column: position.column, message: text };
      }),
    };
  }
  const output = await worker.getEmitOutput(fileName);
  const file = output.outputFiles.find((item) => item.name.endsWith('.js'));
  if (output.emitSkipped || !file) return { ok: false, problems: [{ line: 1, column: 1, message: 'TypeScript emitted no JavaScript for this file' }] };
  return { ok: true, code: file.text };
}
