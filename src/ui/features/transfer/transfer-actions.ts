/**
 * Import and export from the Files card: the open environment as a `.ts` file (an imported one is shown
 * for review, like a share link, before it is loaded), the evaluation results as results.jsonl,
 * warm-up data as JSONL of chats (download what the last warm-up trained on; import chats to warm up
 * on instead of the expert's demonstrations), and the trained model as a zip (a LoRA model's PEFT
 * adapter, a full fine-tune's model folder) that can be loaded back into the in-tab model.
 * Every outcome lands in the store's transfer message.
 */
import { exportEngineModel, importEngineModel } from '../../../workers/engine-bridge.ts';
import { currentEnvironment } from '../environment/current-environment.ts';
import { exportResults } from '../evaluation/evaluation-actions.ts';
import { currentSetup } from '../share/share-actions.ts';
import { environmentModel } from '../environment/editor-models.ts';
import { usePlayground } from '../../store/index.ts';
import { downloadFile } from '../../kit/download.ts';
import { checkEnvironmentSource, environmentFileName, environmentNameFromFile, takesToolSimulator } from './environment-file.ts';
import { fileSimulator } from '../share/file-simulator.ts';
import { withSimulatorHeader } from '../../../envs/studio/index.ts';
import { simulatorLabel, simulatorRecord } from '../judge/simulator-actions.ts';
import { parseWarmupJsonl, warmupToJsonl } from './sft-jsonl.ts';
import { unzipFiles, zipFiles } from './zip.ts';
import { ensureEngine, loadOpenRunWeights, newRun } from '../training/training-actions.ts';
import { errorMessage } from '../../../common/error-message.ts';
import { isBusy } from '../../store/selectors.ts';

const store = usePlayground;

function report(kind: 'ok' | 'failed', text: string): void {
  store.getState().setTransferMessage({ kind, text });
}

function message(error: unknown): string {
  return errorMessage(error);
}

/**
 * Downloads the open environment's source (as it is in the editor) as `<name>.ts`; a file whose tools
 * are simulated starts with the tool simulator chosen in the tab (a comment tabrl reads: which
 * `--simulator-*` flags lend the same; never a key).
 */
export function exportEnvironmentFile(): void {
  const saved = currentEnvironment();
  if (!saved) return;
  const fileName = environmentFileName(saved.name);
  const source = environmentModel(saved.id, saved.source).getValue();
  const simulated = takesToolSimulator(source);
  downloadFile(fileName, simulated ? withSimulatorHeader(source, simulatorRecord()) : source, 'text/typescript');
  report('ok', simulated ? `Downloaded ${fileName}; it records its tool simulator, ${simulatorLabel()}.` : `Downloaded ${fileName}.`);
}

/**
 * Reads a `.ts` file and shows it for review (it is code from elsewhere); "Load into editor" then
 * saves it as a new environment. A header naming the tool simulator it was made with (the tab's
 * download writes one) picks the same simulator on load, under the review's consent for a stored key,
 * as a share link's does.
 */
export async function importEnvironmentFile(file: File): Promise<void> {
  try {
    const source = await file.text();
    checkEnvironmentSource(source, file.name, file.size);
    store.getState().setReviewFile(file.name);
    // The file's code with the playground's current setup around it: loading it changes nothing else but the simulator its header names.
    const setup = currentSetup({ source, name: environmentNameFromFile(file.name) });
    const choice = fileSimulator(source)?.choice;
    const endpoint = choice?.kind === 'endpoint' ? { simulatorBaseURL: choice.baseURL, simulatorModel: choice.model } : {};
    store.getState().setReview(choice ? { ...setup, simulatorKind: choice.kind, ...endpoint } : setup);
    store.getState().setTransferMessage(null);
  } catch (error) {
    report('failed', message(error));
  }
}

/** Downloads the current evaluation's rollouts as results.jsonl (the lines `tabrl eval` writes). */
export function exportResultsFile(): void {
  const { run } = store.getState();
  if (run.records.length === 0) return report('failed', 'There are no evaluation results yet: press Evaluate first.');
  exportResults();
  report('ok', `Downloaded ${run.records.length} rollouts as ${run.environment?.name ?? 'environment'}-results.jsonl.`);
}

/** Downloads the chats the last warm-up trained on as JSONL (`{"messages": [...]}` per line). */
export function exportWarmupData(): void {
  const data = store.getState().lastWarmup;
  if (!data) return report('failed', 'No warm-up has run in this page yet, so there are no demonstrations to download.');
  const fileName = `${data.origin === 'imported' ? data.name.replace(/\.jsonl$/i, '') : `${data.name}-warmup`}.jsonl`;
  downloadFile(fileName, warmupToJsonl(data.transcripts), 'application/x-ndjson');
  report('ok', `Downloaded ${data.transcripts.length} chats as ${fileName}.`);
}

/** Reads a JSONL of OpenAI-format chats; the next warm-up trains on them instead of making demonstrations. A bad line is named and nothing changes. */
export async function importWarmupData(file: File): Promise<void> {
  try {
    const transcripts = parseWarmupJsonl(await file.text(), file.name);
    store.getState().setImportedWarmup({ origin: 'imported', name: file.name, transcripts });
    report('ok', `The next warm-up trains on the ${transcripts.length} chats of ${file.name} instead of the expert's demonstrations.`);
  } catch (error) {
    report('failed', `${message(error)}. Nothing was imported.`);
  }
}

/** Forgets imported warm-up data: the next warm-up makes demonstrations with the expert again. */
export function clearImportedWarmup(): void {
  store.getState().setImportedWarmup(null);
  store.getState().setTransferMessage(null);
}

/** Downloads the trained model as a zip: a LoRA model's adapter, a fully fine-tuned model's folder. */
export async function exportModelFile(): Promise<void> {
  const { trainingRun, importedModel } = store.getState();
  if (!importedModel && (!trainingRun || trainingRun.sft.length + trainingRun.grpo.length === 0)) return report('failed', 'There is no trained model yet: warm up or train the in-tab model first.');
  try {
    await ensureEngine();
    await loadOpenRunWeights();
    const exported = await exportEngineModel();
    const fileName = `${exported.model}-${exported.kind === 'adapter' ? 'lora-adapter' : 'model'}.zip`;
    downloadFile(fileName, zipFiles(exported.files), 'application/zip');
    report('ok', `Downloaded ${fileName} (${[...exported.files.keys()].join(' + ')}).`);
  } catch (error) {
    report('failed', `The model could not be exported: ${message(error)}`);
  }
}

/** Loads an adapter or model-folder zip into the in-tab model (the open run is set aside); says what does not fit when it does not. */
export async function importModelFile(file: File): Promise<void> {
  const { job, run } = store.getState();
  if (isBusy({ job, run })) return report('failed', 'Wait for the running job to end (or stop it) before importing a model.');
  try {
    const files = unzipFiles(new Uint8Array(await file.arrayBuffer()), file.name);
    await ensureEngine();
    const loaded = await importEngineModel(files, file.name);
    newRun();
    store.getState().setImportedModel(loaded);
    report('ok', `Loaded the ${loaded} into the in-tab model. Chat and Evaluate (in-tab policy) use it; Warm up or Train start a new run from it.`);
  } catch (error) {
    report('failed', `${message(error)} Nothing was loaded.`);
  }
}
