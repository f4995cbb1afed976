/**
 * The Monaco editor for the open environment file. It swaps models when another environment is
 * opened, saves edits (through actions.editSource), and mirrors the file's error markers into the
 * store so the problems strip and the Run button can show them before anything runs.
 */
import { useEffect, useRef } from 'react';
import { editSource } from './environment-actions.ts';
import { usePlayground } from '../../store/index.ts';
import { monaco, setupMonaco } from './monaco-setup.ts';
import { environmentModel } from './editor-models.ts';

/** The editor pane, filling its parent. */
export function EnvironmentEditor() {
  const currentId = usePlayground((state) => state.currentId);
  const container = useRef<HTMLDivElement>(null);
  const editor = useRef<monaco.editor.IStandaloneCodeEditor | null>(null);
  const presenter = usePlayground((state) => state.lessonView.presenter);

  useEffect(() => {
    if (!container.current) return;
    setupMonaco();
    const instance = monaco.editor.create(container.current, {
      model: null,
      ...editorFont(usePlayground.getState().lessonView.presenter),
      minimap: { enabled: false },
      automaticLayout: true,
      scrollBeyondLastLine: false,
      tabSize: 2,
      fixedOverflowWidgets: true,
      wordWrap: 'off',
      renderLineHighlight: 'line',
    });
    editor.current = instance;
    const contentListener = instance.onDidChangeModelContent(() => {
      const id = usePlayground.getState().currentId;
      const model = instance.getModel();
      if (id && model) editSource(id, model.getValue());
    });
    const markerListener = monaco.editor.onDidChangeMarkers((uris) => {
      const model = instance.getModel();
      if (!model || !uris.some((uri) => uri.toString() === model.uri.toString())) return;
      publishProblems(model);
    });
    return () => {
      contentListener.dispose();
      markerListener.dispose();
      instance.dispose();
      editor.current = null;
    };
  }, []);

  useEffect(() => {
    editor.current?.updateOptions(editorFont(presenter));
  }, [presenter]);

  useEffect(() => {
    const instance = editor.current;
    if (!instance || !currentId) return;
    const saved = usePlayground.getState().environments.find((item) => item.id === currentId);
    if (!saved) return;
    const model = environmentModel(saved.id, saved.source);
    instance.setModel(model);
    publishProblems(model);
  }, [currentId]);

  return <div className="editor" ref={container} data-testid="editor" />;
}

/** The editor's type size: larger in presenter mode. */
function editorFont(presenter: boolean): { fontSize: number; lineHeight: number } {
  return presenter ? { fontSize: 19, lineHeight: 27 } : { fontSize: 15, lineHeight: 22 };
}

function publishProblems(model: monaco.editor.ITextModel): void {
  const markers = monaco.editor.getModelMarkers({ resource: model.uri }).filter((marker) => marker.severity === monaco.MarkerSeverity.Error);
  usePlayground.getState().setProblems(markers.map((marker) => ({ line: marker.startLineNumber, column: marker.startColumn, message: marker.message })));
}

/** Moves the editor's cursor to a problem (used by the problems strip). */
export function revealProblem(line: number, column: number): void {
  const instance = monaco.editor.getEditors()[0];
  if (!instance) return;
  instance.revealLineInCenter(line);
  instance.setPosition({ lineNumber: line, column });
  instance.focus();
}
