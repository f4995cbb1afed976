/** One Monaco model per saved environment, so each keeps its own undo history and diagnostics. */
import { ENVIRONMENT_URI_PREFIX, monaco, setupMonaco } from './monaco-setup.ts';

/** The model of environment `id`, created with `source` the first time. */
export function environmentModel(id: string, source: string): monaco.editor.ITextModel {
  setupMonaco();
  const uri = monaco.Uri.parse(`${ENVIRONMENT_URI_PREFIX}${id}.ts`);
  return monaco.editor.getModel(uri) ?? monaco.editor.createModel(source, 'typescript', uri);
}

/** Disposes of environment `id`'s model (after it is deleted). */
export function disposeEnvironmentModel(id: string): void {
  monaco.editor.getModel(monaco.Uri.parse(`${ENVIRONMENT_URI_PREFIX}${id}.ts`))?.dispose();
}
