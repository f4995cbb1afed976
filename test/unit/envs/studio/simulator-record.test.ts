/**
 * The tool simulator an environment file records when the tab downloads it: written as a comment
 * header, read back as it was, replaced rather than stacked on a second download, refused when
 * malformed, and turned into the `--simulator-*` flags that lend the same simulator from tabrl
 * (quoted where a value could break a shell line); never a key.
 */
import { describe, expect, test } from 'vitest';
import { readSimulatorRecord, simulatorFlags, simulatorHeader, withSimulatorHeader, withoutSimulatorHeader } from '../../../../src/envs/studio/index.ts';

const SOURCE = "import { SimulatedToolEnv } from 'tabrl/studio';\nexport default function loadEnvironment(args) {}\n";
const ENDPOINT = { label: 'endpoint sim-m at http://sim.test/v1', baseURL: 'http://sim.test/v1', model: 'sim-m' };

describe('the simulator record of an environment file', () => {
  test('an endpoint round-trips through the header, which says which flags lend it; the source below is unchanged', () => {
    const file = withSimulatorHeader(SOURCE, ENDPOINT);
    expect(readSimulatorRecord(file)).toEqual(ENDPOINT);
    expect(file.endsWith(SOURCE)).toBe(true);
    expect(file.split('\n')[1]).toBe(
      '// tabrl-simulator: the tools were simulated in the tab by endpoint sim-m at http://sim.test/v1; from a terminal, lend the same: tabrl eval|train FILE --simulator-base-url http://sim.test/v1 --simulator-model sim-m --simulator-api-key-env VAR (the key is not in this file)',
    );
    expect(simulatorFlags(ENDPOINT)).toBe('--simulator-base-url http://sim.test/v1 --simulator-model sim-m');
  });

  test('the heuristic is --simulator-model heuristic; a model tabrl cannot lend records only its label and no flags', () => {
    const heuristic = { label: 'the scripted simulator (offline, nearest recorded call)', model: 'heuristic' };
    expect(readSimulatorRecord(simulatorHeader(heuristic))).toEqual(heuristic);
    expect(simulatorFlags(heuristic)).toBe('--simulator-model heuristic');
    const webllm = { label: 'the judge: WebLLM Qwen2.5-0.5B' };
    expect(readSimulatorRecord(simulatorHeader(webllm) + SOURCE)).toEqual(webllm);
    expect(simulatorFlags(webllm)).toBeUndefined();
    expect(simulatorHeader(webllm)).toContain('tabrl cannot lend that model');
  });

  test('a second download replaces the header instead of stacking another', () => {
    const twice = withSimulatorHeader(withSimulatorHeader(SOURCE, ENDPOINT), { label: 'h', model: 'heuristic' });
    expect(twice.split('\n').filter((line) => line.startsWith('// tabrl-simulator:'))).toHaveLength(2);
    expect(readSimulatorRecord(twice)).toEqual({ label: 'h', model: 'heuristic' });
    expect(withoutSimulatorHeader(twice)).toBe(SOURCE);
  });

  test('a value that could break a shell line or the comment is quoted or flattened', () => {
    const odd = { label: 'endpoint\nevil', baseURL: 'http://x/v1; rm -rf ~', model: "it's" };
    const header = simulatorHeader(odd);
    expect(header.split('\n')).toHaveLength(3);
    expect(simulatorFlags(odd)).toBe("--simulator-base-url 'http://x/v1; rm -rf ~' --simulator-model 'it'\\''s'");
    expect(readSimulatorRecord(header)).toEqual({ label: 'endpoint evil', baseURL: 'http://x/v1; rm -rf ~', model: "it's" });
  });

  test('a file without a header, or with a malformed one, records nothing', () => {
    expect(readSimulatorRecord(SOURCE)).toBeUndefined();
    expect(readSimulatorRecord('// tabrl-simulator: {not json\n' + SOURCE)).toBeUndefined();
    expect(readSimulatorRecord('// tabrl-simulator: {"label": 3}\n')).toBeUndefined();
    expect(readSimulatorRecord('// tabrl-simulator: {"label": "x", "baseURL": "http://y"}\n')).toBeUndefined();
    expect(readSimulatorRecord('\n// tabrl-simulator: {"label": "x"}\n')).toBeUndefined();
  });
});
