/**
 * The evidence-weighted feature score. Deterministic: the same votes, linked signals and `asOf` time
 * always give the same score, and the breakdown lists every term so a teammate can check the sum.
 *
 *   score = votes × 1
 *         + Σ over linked signals of 2 × category × urgency × sentiment × recency
 *         + distinct end users (voters ∪ signal authors) × 0.5
 *   recency = 0.5 ^ (age in days / 90)
 */
export const VOTE_WEIGHT = 1;
export const SIGNAL_WEIGHT = 2;
export const DISTINCT_END_USER_WEIGHT = 0.5;
export const RECENCY_HALF_LIFE_DAYS = 90;

export const CATEGORY_WEIGHTS: Record<string, number> = { bug: 1.5, feature: 1.2, ux: 1, support: 0.8, review: 0.6 };
export const URGENCY_WEIGHTS: Record<string, number> = { critical: 2, high: 1.5, medium: 1, low: 0.7, unknown: 1 };
export const SENTIMENT_WEIGHTS: Record<string, number> = { negative: 1.3, mixed: 1.1, neutral: 1, positive: 0.9, unknown: 1 };

export interface ScoreInput {
  asOf: Date;
  /** Votes on the feature. */
  votes: number;
  /** End users among its voters and the authors of its linked signals, each once (counted by the database). */
  distinctEndUsers: number;
  signals: Array<{ id: string; endUserId: string; category: string; urgency: string; sentiment: string | null; createdAt: Date }>;
}

const round = (n: number) => Math.round(n * 10_000) / 10_000;
const DAY_MS = 86_400_000;

export function scoreFeature(input: ScoreInput) {
  const signals = input.signals.map((s) => {
    const ageDays = Math.max(0, (input.asOf.getTime() - s.createdAt.getTime()) / DAY_MS);
    const category = CATEGORY_WEIGHTS[s.category] ?? 1;
    const urgency = URGENCY_WEIGHTS[s.urgency] ?? 1;
    const sentiment = SENTIMENT_WEIGHTS[s.sentiment ?? 'unknown'] ?? 1;
    const recency = round(0.5 ** (ageDays / RECENCY_HALF_LIFE_DAYS));
    return {
      signalId: s.id, category: s.category, urgency: s.urgency, sentiment: s.sentiment, ageDays: round(ageDays),
      weights: { category, urgency, sentiment, recency },
      points: round(SIGNAL_WEIGHT * category * urgency * sentiment * recency),
    };
  }).sort((a, b) => b.points - a.points || a.signalId.localeCompare(b.signalId));
  const distinct = input.distinctEndUsers;
  const votes = { count: input.votes, weight: VOTE_WEIGHT, points: round(input.votes * VOTE_WEIGHT) };
  const signalTerm = { count: signals.length, weight: SIGNAL_WEIGHT, points: round(signals.reduce((sum, s) => sum + s.points, 0)), items: signals };
  const endUsers = { count: distinct, weight: DISTINCT_END_USER_WEIGHT, points: round(distinct * DISTINCT_END_USER_WEIGHT) };
  const score = round(votes.points + signalTerm.points + endUsers.points);
  return {
    score,
    breakdown: {
      formula: 'votes × 1 + Σ(2 × category × urgency × sentiment × recency) + distinctEndUsers × 0.5; recency = 0.5^(ageDays/90)',
      asOf: input.asOf.toISOString(),
      votes,
      signals: signalTerm,
      distinctEndUsers: endUsers,
      total: score,
    },
  };
}

export type ScoreBreakdown = ReturnType<typeof scoreFeature>['breakdown'];
