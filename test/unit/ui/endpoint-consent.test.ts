/** Share links and stored keys: a link's endpoint URL that would take a stored key elsewhere needs the person's say-so. */
import { describe, expect, test } from 'vitest';
import { endpointChangesNeedingConsent } from '../../../src/ui/features/share/endpoint-consent.ts';

const MINE = { baseURL: 'https://api.mine.example/v1', hasApiKey: true, judgeBaseURL: 'https://judge.mine.example/v1', judgeHasApiKey: true };

describe('endpoint consent', () => {
  test('a link pointing the policy or the judge elsewhere while a key is stored is held, each named with both URLs', () => {
    expect(endpointChangesNeedingConsent({ baseURL: 'https://evil.example/v1', judgeBaseURL: 'https://evil.example/judge' }, MINE)).toEqual([
      { role: 'policy', from: MINE.baseURL, to: 'https://evil.example/v1' },
      { role: 'judge', from: MINE.judgeBaseURL, to: 'https://evil.example/judge' },
    ]);
  });

  test('the same endpoint (up to a trailing slash or spaces) is no change', () => {
    expect(endpointChangesNeedingConsent({ baseURL: 'https://api.mine.example/v1/', judgeBaseURL: ' https://judge.mine.example/v1' }, MINE)).toEqual([]);
  });

  test('without a stored key there is nothing to leak, so the link applies freely', () => {
    expect(endpointChangesNeedingConsent({ baseURL: 'https://other.example/v1', judgeBaseURL: 'https://other.example/judge' }, { ...MINE, hasApiKey: false, judgeHasApiKey: false })).toEqual([]);
    expect(endpointChangesNeedingConsent({ baseURL: 'https://other.example/v1' }, { ...MINE, hasApiKey: false })).toEqual([]);
  });

  test('an older link without a judge URL leaves the judge alone', () => {
    expect(endpointChangesNeedingConsent({ baseURL: MINE.baseURL }, MINE)).toEqual([]);
  });

  test("a link pointing the tool simulator elsewhere while a simulator key is stored is held too; without that key it applies freely", () => {
    const withSimulator = { ...MINE, simulatorBaseURL: 'https://sim.mine.example/v1', simulatorHasApiKey: true };
    expect(endpointChangesNeedingConsent({ baseURL: MINE.baseURL, simulatorBaseURL: 'https://evil.example/sim' }, withSimulator)).toEqual([
      { role: 'simulator', from: 'https://sim.mine.example/v1', to: 'https://evil.example/sim' },
    ]);
    expect(endpointChangesNeedingConsent({ baseURL: MINE.baseURL, simulatorBaseURL: 'https://sim.mine.example/v1/' }, withSimulator)).toEqual([]);
    expect(endpointChangesNeedingConsent({ baseURL: MINE.baseURL, simulatorBaseURL: 'https://evil.example/sim' }, { ...withSimulator, simulatorHasApiKey: false })).toEqual([]);
  });
});
