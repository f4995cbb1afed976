/**
 * An environment as a file: the name a download gets (`<name>.ts`) and the checks an imported
 * `.ts` file passes before it is shown for review (a text file of a sane size that defines
 * `loadEnvironment`). Pure: the file's text in, a name and source out.
 */

/** Imported environment files larger than this are refused (a share link allows about as much). */
const MAX_ENVIRONMENT_FILE_BYTES = 200_000;

/** The file name a download of environment `name` gets: the name with unsafe characters replaced, plus `.ts`. */
export function environmentFileName(name: string): string {
  const safe = name
    .trim()
    .replace(/[^\w.() -]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return `${safe || 'environment'}.ts`;
}

/** Whether an environment file's tools are simulated (it takes a lent simulator as args.simulatorClient, or builds a SimulatedToolEnv), so its download records the tab's simulator. */
export function takesToolSimulator(source: string): boolean {
  return /\bsimulatorClient\b|\bSimulatedToolEnv\b/.test(source);
}

/** The environment name an imported file gets: its file name without `.ts`. */
export function environmentNameFromFile(fileName: string): string {
  return fileName.replace(/\.(m?ts|js)$/i, '').trim() || 'imported';
}

/** Checks an imported file's text; throws saying what is wrong and what to do. */
export function checkEnvironmentSource(source: string, fileName: string, byteLength: number): void {
  if (byteLength > MAX_ENVIRONMENT_FILE_BYTES) throw new Error(`${fileName} is ${Math.round(byteLength / 1000)} kB; an environment file may be at most ${MAX_ENVIRONMENT_FILE_BYTES / 1000} kB.`);
  if (source.includes('\u0000')) throw new Error(`${fileName} is not a text file. Import the .ts file of an environment.`);
  if (!/\bloadEnvironment\b/.test(source)) throw new Error(`${fileName} defines no loadEnvironment: an environment file ends with \`export default function loadEnvironment(args)\`.`);
}
