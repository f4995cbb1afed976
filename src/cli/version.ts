/**
 * Which TabRL made a file: the package version, and the git commit of the checkout it runs from
 * (null when it is not a git checkout or git is missing), recorded in results' metadata.json.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let cached: { tabrl_version: string; tabrl_commit: string | null } | undefined;

/** `{ tabrl_version, tabrl_commit }` of the running TabRL (read once). */
export function tabrlVersion(): { tabrl_version: string; tabrl_commit: string | null } {
  if (cached) return cached;
  let version = 'unknown';
  try {
    version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    // A copy without its package.json: the version stays unknown.
  }
  let commit: string | null = null;
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
    if (/^[0-9a-f]{40}$/.test(head)) commit = head;
  } catch {
    // Not a git checkout (an npm install), or no git: no commit to record.
  }
  cached = { tabrl_version: version, tabrl_commit: commit };
  return cached;
}
