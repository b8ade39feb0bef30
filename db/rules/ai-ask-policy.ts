import { Analysed, Claim, analyse, claimsOf, findPhrases, poolOf, supported } from './ai-claims';
import { INCENTIVE, SourceVersion, contentPool, isIncentiveText, plural } from './ai-validator';

// ---- ask drafts (§6) -------------------------------------------------------------------------

export const POLICY_CHECKS = [
  'no_review_gating', 'no_sentiment_conditioned_reward', 'no_invented_numbers',
  'incentive_disclosed_when_offered', 'no_undisclosed_incentive',
] as const;
export type PolicyCheckName = (typeof POLICY_CHECKS)[number];
/** A fail of any of these discards the draft. */
export const DISCARDING_CHECKS: PolicyCheckName[] = ['no_review_gating', 'no_sentiment_conditioned_reward', 'no_invented_numbers'];

const GATING_FEELINGS = new Set(['happy', 'satisfied', 'enjoy', 'enjoyed', 'love', 'loved', 'great', 'good', 'positive', 'pleased', 'delighted']);
const GATING_REVIEWS = [
  ...['positive', 'good', 'great', 'glowing', 'favorable', 'favourable'].flatMap((w) => plural(`${w} review`)),
  ...plural('5 star'), ...plural('five star'),
];
const UNHAPPY_ROUTES = new Set(['contact', 'email', 'tell', 'reply', 'reach']);
const REWARD_WORDS = [...INCENTIVE, 'discount', 'free', 'credit', 'gift', 'prize', 'coupon'];
const SENTIMENT_WORDS = [
  'positive', 'happy', 'satisfied', 'glowing', 'good review', 'great review', ...plural('5 star'), ...plural('five star'),
  'rate us', 'favorable', 'favourable',
];

/** Review gating: asking only happy customers, or routing unhappy ones away from the review. */
export function hasReviewGating(a: Analysed): boolean {
  const t = a.tokens.map((x) => x.text);
  for (let i = 0; i < t.length; i++) {
    if (t[i] === 'if' && t[i + 1]?.startsWith('you') && t.slice(i + 2, i + 7).some((w) => GATING_FEELINGS.has(w))) return true;
    const unhappy = t[i] === 'unhappy' ? i + 1 : t[i] === 'if' && t[i + 1] === 'not' ? i + 2 : -1;
    if (unhappy >= 0 && t.slice(unhappy, unhappy + 8).some((w) => UNHAPPY_ROUTES.has(w))) return true;
  }
  return findPhrases(a.tokens, GATING_REVIEWS).length > 0;
}

/** Sentences end at . ! ? before a space or the end, and at newlines. */
export function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])(?=\s|$)|\n/).map((x) => x.trim()).filter(Boolean);
}

export function hasSentimentConditionedReward(text: string): boolean {
  return sentencesOf(text).some((sentence) => {
    const a = analyse(sentence);
    return findPhrases(a.tokens, REWARD_WORDS).length > 0 && findPhrases(a.tokens, SENTIMENT_WORDS).length > 0;
  });
}

const collapse = (s: string) => analyse(s).norm.replace(/\s+/g, ' ').trim();

export interface AskFacts {
  recipientName?: string;
  context?: string;
  incentiveDisclosure?: string;
  /** The item's version when a proofItemId was named. */
  version?: SourceVersion | null;
}

export interface PolicyCheck {
  name: PolicyCheckName;
  status: 'pass' | 'fail';
}

/** §6: the five policy checks, in order, on the draft's subject and body. */
export function askPolicyChecks(draft: { subject: string; body: string }, facts: AskFacts): PolicyCheck[] {
  const texts = [draft.subject, draft.body];
  const analysed = texts.map(analyse);
  const pool = new Set([
    ...poolOf(facts.recipientName, facts.context, facts.incentiveDisclosure),
    ...(facts.version ? contentPool(facts.version) : []),
  ]);
  const failed: Record<PolicyCheckName, boolean> = {
    no_review_gating: analysed.some(hasReviewGating),
    no_sentiment_conditioned_reward: texts.some(hasSentimentConditionedReward),
    no_invented_numbers: analysed.some((a) => claimsOf(a).some((c: Claim) => !supported(c, pool))),
    incentive_disclosed_when_offered: facts.incentiveDisclosure !== undefined
      && !collapse(draft.body).includes(collapse(facts.incentiveDisclosure)),
    no_undisclosed_incentive: facts.incentiveDisclosure === undefined && analysed.some(isIncentiveText),
  };
  return POLICY_CHECKS.map((name) => ({ name, status: failed[name] ? 'fail' : 'pass' }));
}

/** The checks a person-written request message must pass (§7). */
export function messagePolicyFailures(message: string): PolicyCheckName[] {
  const out: PolicyCheckName[] = [];
  if (hasReviewGating(analyse(message))) out.push('no_review_gating');
  if (hasSentimentConditionedReward(message)) out.push('no_sentiment_conditioned_reward');
  return out;
}
