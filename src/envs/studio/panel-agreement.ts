/**
 * How much a panel of judges agrees, and how its votes become one score. Each judge's score in
 * [0, 1] is a vote (≥ 0.5 is "yes"); a judge that gave no score on an item (`null`) does not vote
 * on it. Figures:
 * - per-item agreement: the share of pairs of judges that voted alike on the item (1 = unanimous);
 * - pairwise agreement: the mean of that over the items with two or more votes;
 * - Fleiss' kappa: agreement corrected for what chance would give with the panel's overall yes rate
 *   (Fleiss 1971, "Measuring nominal scale agreement among many raters"); null when every vote is
 *   the same (chance agreement is 1 and the figure is undefined).
 * An item is `split` when its votes are not unanimous. Pure functions; no model calls here.
 */

/** How a panel's scores become one: the mean score, a majority of yes votes (more than half), or every judge saying yes. */
export type PanelAggregation = 'mean' | 'majority' | 'unanimous';

/** The aggregations, for checking input. */
export const PANEL_AGGREGATIONS: readonly PanelAggregation[] = ['mean', 'majority', 'unanimous'];

/** A score at or above this is a "yes" vote. */
export const PANEL_YES_AT = 0.5;

/** The panel's agreement over a set of items. */
export interface PanelAgreement {
  /** Items with at least two votes (the ones the figures are over). */
  items: number;
  /** Mean share of agreeing judge pairs per item; null with no item. */
  pairwise: number | null;
  /** Fleiss' kappa; null with no item, or when every vote was the same. */
  fleissKappa: number | null;
  /** Per item (in input order): its share of agreeing pairs, or null with fewer than two votes. */
  perItem: (number | null)[];
  /** Indices of the items whose votes were not unanimous. */
  split: number[];
}

/** One score from the scores of the judges that gave one (at least one); see `PanelAggregation`. */
export function aggregatePanelScores(scores: readonly number[], aggregation: PanelAggregation): number {
  if (scores.length === 0) throw new Error('aggregatePanelScores: no judge gave a score');
  const yes = scores.filter((score) => score >= PANEL_YES_AT).length;
  if (aggregation === 'mean') return scores.reduce((a, b) => a + b, 0) / scores.length;
  if (aggregation === 'majority') return yes * 2 > scores.length ? 1 : 0;
  return yes === scores.length ? 1 : 0;
}

/** The share of agreeing pairs among an item's votes, or null with fewer than two. */
export function itemAgreement(votes: readonly boolean[]): number | null {
  const n = votes.length;
  if (n < 2) return null;
  const yes = votes.filter(Boolean).length;
  const no = n - yes;
  return (yes * (yes - 1) + no * (no - 1)) / (n * (n - 1));
}

/** Agreement figures of a panel over items, each a list of judge scores (null: that judge gave none). */
export function panelAgreement(items: readonly (readonly (number | null)[])[]): PanelAgreement {
  const votesOf = (scores: readonly (number | null)[]) => scores.filter((score): score is number => score !== null).map((score) => score >= PANEL_YES_AT);
  const perItem = items.map((scores) => itemAgreement(votesOf(scores)));
  const counted = items.map(votesOf).filter((votes) => votes.length >= 2);
  const split = perItem.flatMap((agreement, i) => (agreement !== null && agreement < 1 ? [i] : []));
  if (counted.length === 0) return { items: 0, pairwise: null, fleissKappa: null, perItem, split };
  const observed = perItem.filter((agreement): agreement is number => agreement !== null);
  const pairwise = observed.reduce((a, b) => a + b, 0) / observed.length;
  // Chance agreement from the overall share of yes votes (every vote weighs the same).
  const allVotes = counted.flat();
  const yesShare = allVotes.filter(Boolean).length / allVotes.length;
  const chance = yesShare ** 2 + (1 - yesShare) ** 2;
  const fleissKappa = chance === 1 ? null : (pairwise - chance) / (1 - chance);
  return { items: counted.length, pairwise, fleissKappa, perItem, split };
}
