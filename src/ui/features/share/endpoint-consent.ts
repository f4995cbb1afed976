/**
 * A share link carries endpoint URLs (the policy's, the judge's and the tool simulator's) but never keys. Taking a link's
 * URL while a key is stored for that endpoint would send the key to whoever made the link, so such
 * a change is applied only when the person says so; without a stored key there is nothing to leak.
 */

/** An endpoint a link would move away from the person's own while a key for it is stored. */
export interface EndpointChange {
  role: 'policy' | 'judge' | 'simulator';
  /** The URL in use now, where the stored key goes. */
  from: string;
  /** The link's URL. */
  to: string;
}

/** The person's endpoints now, and whether a key is stored for each. */
export interface CurrentEndpoints {
  baseURL: string;
  hasApiKey: boolean;
  judgeBaseURL: string;
  judgeHasApiKey: boolean;
  /** The simulator endpoint's URL and whether its key is stored (absent: the caller has no simulator). */
  simulatorBaseURL?: string;
  simulatorHasApiKey?: boolean;
}

/** The endpoint changes in a link (its policy URL, and its judge and simulator URLs when it has them) that would take a stored key elsewhere. */
export function endpointChangesNeedingConsent(link: { baseURL: string; judgeBaseURL?: string | undefined; simulatorBaseURL?: string | undefined }, current: CurrentEndpoints): EndpointChange[] {
  const changes: EndpointChange[] = [];
  if (current.hasApiKey && !sameEndpoint(link.baseURL, current.baseURL)) changes.push({ role: 'policy', from: current.baseURL, to: link.baseURL });
  if (link.judgeBaseURL !== undefined && current.judgeHasApiKey && !sameEndpoint(link.judgeBaseURL, current.judgeBaseURL))
    changes.push({ role: 'judge', from: current.judgeBaseURL, to: link.judgeBaseURL });
  if (link.simulatorBaseURL !== undefined && current.simulatorHasApiKey && current.simulatorBaseURL !== undefined && !sameEndpoint(link.simulatorBaseURL, current.simulatorBaseURL))
    changes.push({ role: 'simulator', from: current.simulatorBaseURL, to: link.simulatorBaseURL });
  return changes;
}

// Equal up to surrounding spaces and trailing slashes ("…/v1" and "…/v1/" reach the same server with the same key).
function sameEndpoint(a: string, b: string): boolean {
  const normal = (url: string) => url.trim().replace(/\/+$/, '');
  return normal(a) === normal(b);
}
