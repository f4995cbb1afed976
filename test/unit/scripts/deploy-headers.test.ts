/**
 * public/_headers, the file static hosts read, says what the dev and preview servers send: the
 * cross-origin isolation headers on every path and the sandbox frame's Content-Security-Policy.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CROSS_ORIGIN_ISOLATION_HEADERS } from '../../../scripts/cross-origin-isolation.ts';
import { SANDBOX_CSP } from '../../../vite.config.ts';

/** The _headers file as path → header name → value (Netlify's format: a path line, then indented `Name: value` lines). */
function parseHeadersFile(text: string): Map<string, Map<string, string>> {
  const rules = new Map<string, Map<string, string>>();
  let current: Map<string, string> | null = null;
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    if (!/^\s/.test(line)) {
      current = new Map();
      rules.set(line.trim(), current);
      continue;
    }
    const colon = line.indexOf(':');
    if (current === null || colon < 0) throw new Error(`public/_headers: a header line outside a path, or without a colon: ${line}`);
    current.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return rules;
}

it('public/_headers isolates every path and gives the sandbox frame its policy, as vite.config.ts does', () => {
  const rules = parseHeadersFile(readFileSync(new URL('../../../public/_headers', import.meta.url), 'utf8'));
  expect(Object.fromEntries(rules.get('/*') ?? [])).toEqual(CROSS_ORIGIN_ISOLATION_HEADERS);
  expect(rules.get('/sandbox/*')?.get('Content-Security-Policy')).toBe(SANDBOX_CSP);
});
