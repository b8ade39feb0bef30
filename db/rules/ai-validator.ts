import {
  Analysed, Claim, PhraseMatch, analyse, canonicalNumber, claimsOf, findPhrases, poolOf, supported,
} from './ai-claims';

/**
 * The validator of AI.md §4, §6 and §8: every model answer passes here before anyone sees it.
 * Pure: the caller gathers the facts (source versions, incentive, verification, the consent grant).
 */

// ---- lexicons (AI.md §4.2) -------------------------------------------------------------------

const plural = (...words: string[]) => words.flatMap((w) => [w, `${w}s`]);

export const INCENTIVE = [
  ...plural('incentive'), 'incentivize', 'incentivized', 'incentivise', 'incentivised', ...plural('reward'), 'rewarded',
  'compensated', ...plural('gift card'), ...plural('voucher'), 'in exchange for',
];
const NO_INCENTIVE = ['unincentivized', 'unincentivised', 'uncompensated', 'unrewarded'];
const VERIFY = ['verified', 'confirmed customer', 'confirmed buyer', 'confirmed purchase', 'authenticated customer'];
const USE = [
  'consent', 'consented', 'approved', 'allowed', 'permitted', 'permission', 'cleared', 'authorized', 'authorised', 'publish',
  'published', 'for use', 'may be used', 'can be used', 'may be shared', 'can be shared', 'may be published', 'can be published',
];
const CHANNEL_PHRASES: Record<string, string[]> = {
  website: ['website', 'web site', 'homepage', 'landing page'],
  in_app: ['in app', 'in product'],
  email: ['email', 'e mail', 'newsletter'],
  sales: [...plural('sales deck'), ...plural('sales material'), 'pitch deck'],
  social_organic: ['social media', 'linkedin', 'twitter', 'instagram', 'facebook', 'tiktok'],
  paid_ads: [...plural('ad'), ...plural('advert'), 'advertising', ...plural('advertisement'), ...plural('paid campaign'), 'paid media', 'sponsored'],
  case_study: ['case study', 'case studies'],
  press: ['press', 'press release', 'media kit'],
};
export const ALL_CHANNELS = Object.keys(CHANNEL_PHRASES);
const ALL = ['anywhere', 'everywhere', 'any channel', 'all channels', 'without restriction', 'unrestricted'];
const FOREVER = ['indefinitely', 'forever', 'permanently', 'no expiry', 'never expires'];
const TRANSLATE = ['translate', 'translated', 'translation', 'translations'];
const COMPANY_SUFFIXES = new Set(['ltd', 'limited', 'inc', 'llc', 'gmbh', 'corp', 'corporation', 'co', 'plc', 'ag', 'sa', 'bv', 'pty']);
const EMAIL = /\S+@\S+\.\S+/;

const live = (matches: PhraseMatch[]) => matches.filter((m) => !m.negated);

/** A text with a non-negated INCENTIVE phrase. */
export const isIncentiveText = (a: Analysed) => live(findPhrases(a.tokens, INCENTIVE)).length > 0;

// ---- facts -----------------------------------------------------------------------------------

export interface SourceVersion {
  id: string;
  text?: string;
  title?: string;
  rating?: number;
  answers?: Record<string, unknown>;
  attribution?: Record<string, string>;
}

export interface ConsentFacts {
  displayMode: string;
  identityFields: string[];
  channels: string[];
  paidUseAllowed: boolean;
  translationAllowed: boolean;
  /** `YYYY-MM-DD`, or null for no end date. */
  validUntil: string | null;
}

export interface SourceFacts {
  itemType: string;
  version: SourceVersion;
  customerName: string | null;
  incentive: { offered: boolean; description?: string };
  verificationState: string;
  /** The newest active, unexpired grant; null when there is none (nothing is allowed). */
  grant: ConsentFacts | null;
}

function answerLeaves(value: unknown, out: Array<string | number>): Array<string | number> {
  if (typeof value === 'string' || typeof value === 'number') out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => answerLeaves(v, out));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => answerLeaves(v, out));
  return out;
}

/** Claims of the version's text, title, answers and rating, plus 5 when rated (the scale). */
export function contentPool(v: SourceVersion): Set<string> {
  const rated = typeof v.rating === 'number';
  return poolOf(v.text, v.title, ...answerLeaves(v.answers ?? {}, []), rated ? v.rating : null, rated ? 5 : null);
}

export const allowedChannels = (grant: ConsentFacts | null): string[] =>
  grant ? grant.channels.filter((c) => c !== 'paid_ads' || grant.paidUseAllowed) : [];

// ---- the checks of §4.2 ----------------------------------------------------------------------

export type IssueCode =
  | 'missing_incentive_disclosure' | 'incentive_misstated' | 'missing_verification_state' | 'verification_overclaim'
  | 'missing_consent_limits' | 'use_outside_consent' | 'identity_beyond_consent' | 'invented_number';

export interface Issue {
  location: string;
  code: IssueCode;
  detail: string;
  text: string;
}

type Found = { code: IssueCode; detail: string };

/** Name tokens, company, title and location this source's consent does not allow, as phrases. */
function forbiddenIdentity(s: SourceFacts): string[] {
  const grant = s.grant;
  const fields = grant && grant.displayMode !== 'anonymous' ? grant.identityFields : [];
  const attribution = s.version.attribution ?? {};
  const out: string[] = [];
  const nameTokens = (name: string | undefined | null) => analyse(name ?? '').tokens.map((t) => t.text).filter((t) => /\p{L}.*\p{L}/u.test(t));
  for (const name of [attribution.name, s.customerName]) {
    const tokens = nameTokens(name);
    let allowed: string[] = [];
    if (fields.includes('name') && grant?.displayMode === 'full_name') allowed = tokens;
    else if (fields.includes('name') && grant?.displayMode === 'first_name') allowed = tokens.slice(0, 1);
    out.push(...tokens.filter((t) => !allowed.includes(t)));
  }
  if (attribution.company && !fields.includes('company')) {
    const words = analyse(attribution.company).tokens.map((t) => t.text);
    out.push(words.join(' '));
    while (words.length > 1 && COMPANY_SUFFIXES.has(words[words.length - 1])) words.pop();
    if (words.join('').replace(/[^\p{L}]/gu, '').length >= 3) out.push(words.join(' '));
  }
  for (const field of ['title', 'location']) {
    if (attribution[field] && !fields.includes(field)) out.push(analyse(attribution[field]).tokens.map((t) => t.text).join(' '));
  }
  return [...new Set(out.filter((p) => analyse(p).tokens.length > 0))];
}

export function identityIssues(a: Analysed, sources: SourceFacts[]): Found[] {
  const out: Found[] = [];
  const email = EMAIL.exec(a.raw);
  if (email) out.push({ code: 'identity_beyond_consent', detail: email[0] });
  const phrases = [...new Set(sources.flatMap(forbiddenIdentity))];
  for (const m of findPhrases(a.tokens, phrases)) out.push({ code: 'identity_beyond_consent', detail: m.phrase });
  return out;
}

function useIssues(a: Analysed, grant: ConsentFacts | null): Found[] {
  if (live(findPhrases(a.tokens, USE)).length === 0) return [];
  const out: Found[] = [];
  const allowed = allowedChannels(grant);
  for (const [channel, phrases] of Object.entries(CHANNEL_PHRASES)) {
    if (allowed.includes(channel)) continue;
    for (const m of live(findPhrases(a.tokens, phrases))) out.push({ code: 'use_outside_consent', detail: m.phrase });
  }
  if (!ALL_CHANNELS.every((c) => allowed.includes(c))) {
    for (const m of live(findPhrases(a.tokens, ALL))) out.push({ code: 'use_outside_consent', detail: m.phrase });
  }
  if (!grant?.translationAllowed) {
    for (const m of live(findPhrases(a.tokens, TRANSLATE))) out.push({ code: 'use_outside_consent', detail: m.phrase });
  }
  // Without a grant nothing is allowed, so "forever" is as wrong as with an end date.
  if (!grant || grant.validUntil) {
    for (const m of live(findPhrases(a.tokens, FOREVER))) out.push({ code: 'use_outside_consent', detail: m.phrase });
  }
  return out;
}

interface Pools {
  content: Set<string>;
  incentive: Set<string>;
  consent: Set<string>;
}

function poolsOf(s: SourceFacts): Pools {
  return {
    content: contentPool(s.version),
    incentive: poolOf(s.incentive.offered ? s.incentive.description : null),
    consent: poolOf(s.grant?.validUntil ?? null),
  };
}

/** Every issue of one model sentence or caveat (§4.2), without the missing_* ones. */
function textIssues(a: Analysed, s: SourceFacts, pools: Pools, isCaveat: boolean): Found[] {
  const out: Found[] = [];
  const claims = claimsOf(a);
  const incentiveText = isIncentiveText(a);
  const numberPools = isCaveat ? [pools.content, pools.incentive, pools.consent] : [pools.content];
  if (!incentiveText) {
    for (const c of claims) if (!supported(c, ...numberPools)) out.push({ code: 'invented_number', detail: c.value });
  }
  if (!s.incentive.offered) {
    for (const m of live(findPhrases(a.tokens, INCENTIVE))) out.push({ code: 'incentive_misstated', detail: m.phrase });
  } else {
    for (const m of findPhrases(a.tokens, INCENTIVE).filter((x) => x.negated)) out.push({ code: 'incentive_misstated', detail: m.phrase });
    for (const m of findPhrases(a.tokens, NO_INCENTIVE)) out.push({ code: 'incentive_misstated', detail: m.phrase });
    if (incentiveText) {
      const incentivePools = isCaveat ? [pools.content, pools.incentive, pools.consent] : [pools.content, pools.incentive];
      for (const c of claims) if (!supported(c, ...incentivePools)) out.push({ code: 'incentive_misstated', detail: c.value });
    }
  }
  if (s.verificationState !== 'verified_customer') {
    for (const m of live(findPhrases(a.tokens, VERIFY))) out.push({ code: 'verification_overclaim', detail: m.phrase });
  }
  out.push(...useIssues(a, s.grant));
  out.push(...identityIssues(a, [s]));
  return out;
}

// ---- summaries (§4.2 output, §5) -------------------------------------------------------------

export const SENTIMENT_VALUES = ['positive', 'mixed', 'neutral', 'negative'] as const;
export type Sentiment = (typeof SENTIMENT_VALUES)[number];

export interface SummaryAnswer {
  sentiment: Sentiment;
  sentences: Array<{ text: string }>;
  caveats: Array<{ text: string }>;
}

export interface ValidatedSummary {
  summary: string;
  sentiment: Sentiment;
  caveats: string[];
  label: string;
  validation: { status: 'passed' | 'revised' | 'fallback'; issues: Issue[]; rejected: string[]; added: string[] };
}

export const AI_SUMMARY_LABEL = 'AI-generated summary';
export const FALLBACK_LABEL = 'Fixed summary, no AI text';

export function consentCaveat(grant: ConsentFacts | null): string {
  if (!grant) return 'Consent: no active consent; not for public use.';
  const channels = allowedChannels(grant);
  const identity = grant.displayMode === 'anonymous' || grant.identityFields.length === 0 ? 'none' : grant.identityFields.join(', ');
  return `Consent: channels ${channels.length ? channels.join(', ') : 'none'}; display ${grant.displayMode}; identity ${identity}; `
    + `paid use ${grant.paidUseAllowed ? 'allowed' : 'not allowed'}; ${grant.translationAllowed ? 'translation allowed' : 'no translation'}; `
    + `valid until ${grant.validUntil ?? 'no end date'}.`;
}

export const incentiveCaveat = (incentive: SourceFacts['incentive']) =>
  incentive.description ? `Incentivized: ${incentive.description}` : 'Incentivized';

export const verificationCaveat = (state: string) =>
  state === 'verified_customer' ? 'Verification: verified customer.' : 'Verification: not verified.';

function hasToken(a: Analysed, word: string, negated?: boolean): boolean {
  return findPhrases(a.tokens, [word]).some((m) => negated === undefined || m.negated === negated);
}

function sentimentOfRating(rating: number | undefined): Sentiment {
  if (typeof rating !== 'number') return 'neutral';
  if (rating >= 4) return 'positive';
  if (rating >= 3) return 'mixed';
  return 'negative';
}

export function fixedSummary(s: SourceFacts): string {
  const rated = typeof s.version.rating === 'number' ? `, rated ${canonicalNumber(s.version.rating)} out of 5` : '';
  return `[Fixed summary] Customer story (${s.itemType})${rated}.`;
}

/** §4: checks every sentence and caveat, removes offending ones, adds the missing caveats. */
export function validateSummary(answer: SummaryAnswer, s: SourceFacts): ValidatedSummary {
  const pools = poolsOf(s);
  const issues: Issue[] = [];
  const rejected: string[] = [];
  const seen = new Set<string>();
  const record = (location: string, text: string, found: Found[]) => {
    for (const f of found) {
      const key = `${location}\u0000${f.code}\u0000${f.detail}`;
      if (seen.has(key)) continue;
      seen.add(key);
      issues.push({ location, code: f.code, detail: f.detail, text });
    }
    if (found.length > 0) rejected.push(text);
    return found.length === 0;
  };
  const sentences = answer.sentences.filter((x, i) => record(`sentences[${i}]`, x.text, textIssues(analyse(x.text), s, pools, false)));
  const caveats = answer.caveats.filter((x, i) => record(`caveats[${i}]`, x.text, textIssues(analyse(x.text), s, pools, true)));
  const kept = caveats.map((c) => analyse(c.text));

  const added: string[] = [];
  const missing = (code: IssueCode, detail: string, text: string) => {
    added.push(text);
    issues.push({ location: 'caveats', code, detail, text });
  };
  if (s.incentive.offered && !kept.some(isIncentiveText)) {
    missing('missing_incentive_disclosure', s.incentive.description ?? 'incentive offered', incentiveCaveat(s.incentive));
  }
  const verified = s.verificationState === 'verified_customer';
  const statesVerification = verified
    ? kept.some((a) => hasToken(a, 'verified', false))
    : kept.some((a) => hasToken(a, 'unverified') || hasToken(a, 'verified', true));
  if (!statesVerification) missing('missing_verification_state', verified ? 'verified_customer' : 'unverified', verificationCaveat(s.verificationState));
  if (!kept.some((a) => hasToken(a, 'consent') || hasToken(a, 'consented') || hasToken(a, 'permission'))) {
    missing('missing_consent_limits', s.grant ? 'consent limits' : 'no active consent', consentCaveat(s.grant));
  }

  const caveatTexts = [...caveats.map((c) => c.text), ...added];
  const validation = { issues, rejected, added };
  if (issues.length === 0) {
    return {
      summary: sentences.map((x) => x.text).join(' '), sentiment: answer.sentiment, caveats: caveatTexts, label: AI_SUMMARY_LABEL,
      validation: { status: 'passed', ...validation },
    };
  }
  if (sentences.length > 0) {
    return {
      summary: sentences.map((x) => x.text).join(' '), sentiment: answer.sentiment, caveats: caveatTexts, label: AI_SUMMARY_LABEL,
      validation: { status: 'revised', ...validation },
    };
  }
  return {
    summary: fixedSummary(s), sentiment: sentimentOfRating(s.version.rating), caveats: caveatTexts, label: FALLBACK_LABEL,
    validation: { status: 'fallback', ...validation },
  };
}

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

// ---- case studies (§8) -----------------------------------------------------------------------

export interface CaseStudyAnswer {
  title: string;
  sections: Array<{ heading: string; statements: Array<{ text: string; citations: Array<{ sourceVersionId: string; quote: string | null }> }> }>;
}

export type StatementReason = 'uncited' | 'unknown_citation' | 'invented_number' | 'altered_quote' | 'identity_beyond_consent' | 'over_length';

export interface RejectedStatement {
  location: string;
  text: string;
  citations: Array<{ sourceVersionId: string; quote: string | null }>;
  reasons: StatementReason[];
}

export const CASE_STUDY_LENGTHS = { short: 6, standard: 12, deep: 24 } as const;
export const FALLBACK_TITLE = 'Customer story';

/** For quote comparison: NFC, straight quotes, whitespace runs as one space, trimmed; case kept. */
export function quoteForm(text: string): string {
  return text.normalize('NFC').replace(/[\u2018\u2019\u201a\u201b]/g, "'").replace(/[\u201c\u201d\u201e\u201f]/g, '"')
    .replace(/\s+/g, ' ').trim();
}

function quotedSpans(text: string): string[] {
  return [...quoteForm(text).matchAll(/"([^"]*)"/g)].map((m) => m[1].trim());
}

function quotable(v: SourceVersion): string[] {
  return [v.text, v.title, ...answerLeaves(v.answers ?? {}, []).filter((x): x is string => typeof x === 'string')]
    .filter((x): x is string => typeof x === 'string').map(quoteForm);
}

export interface ValidatedCaseStudy {
  title: string;
  sections: CaseStudyAnswer['sections'];
  rejectedStatements: RejectedStatement[];
  survivors: number;
}

/** §8: keeps the statements whose every claim is cited, quoted exactly and consented; at most `max`. */
export function validateCaseStudy(answer: CaseStudyAnswer, sources: SourceFacts[], max: number): ValidatedCaseStudy {
  const byVersion = new Map(sources.map((s) => [s.version.id, s]));
  const pools = new Map(sources.map((s) => [s.version.id, contentPool(s.version)]));
  const rejectedStatements: RejectedStatement[] = [];
  let survivors = 0;
  const sections = answer.sections.map((section, i) => ({
    heading: section.heading,
    statements: section.statements.filter((st, j) => {
      const reasons = new Set<StatementReason>();
      const a = analyse(st.text);
      if (st.citations.length === 0) reasons.add('uncited');
      const cited = st.citations.map((c) => byVersion.get(c.sourceVersionId));
      if (cited.some((s) => !s)) reasons.add('unknown_citation');
      const known = cited.filter((s): s is SourceFacts => !!s);
      const citedPools = known.map((s) => pools.get(s.version.id)!);
      if (claimsOf(a).some((c) => !supported(c, ...citedPools))) reasons.add('invented_number');
      const quotes = st.citations.map((c) => (c.quote === null ? null : quoteForm(c.quote)));
      if (quotedSpans(st.text).some((span) => !quotes.includes(span))) reasons.add('altered_quote');
      st.citations.forEach((c, k) => {
        const source = byVersion.get(c.sourceVersionId);
        if (quotes[k] !== null && (!source || !quotable(source.version).some((t) => t.includes(quotes[k]!)))) reasons.add('altered_quote');
      });
      if (identityIssues(a, sources).length > 0) reasons.add('identity_beyond_consent');
      if (reasons.size === 0 && survivors >= max) reasons.add('over_length');
      if (reasons.size > 0) {
        rejectedStatements.push({ location: `sections[${i}].statements[${j}]`, text: st.text, citations: st.citations, reasons: [...reasons] });
        return false;
      }
      survivors++;
      return true;
    }),
  })).filter((s) => s.statements.length > 0);
  const titleA = analyse(answer.title);
  const allPools = [...pools.values()];
  const titleFails = claimsOf(titleA).some((c) => !supported(c, ...allPools)) || identityIssues(titleA, sources).length > 0
    || quotedSpans(answer.title).length > 0;
  return { title: titleFails ? FALLBACK_TITLE : answer.title, sections, rejectedStatements, survivors };
}

// ---- signal analysis (§9) --------------------------------------------------------------------

/** A signal summary may restate only numbers of the signal and never an e-mail address. */
export function signalSummaryAllowed(summary: string, signal: { title: string; body: string }): boolean {
  const pool = poolOf(signal.title, signal.body);
  return !EMAIL.test(summary) && claimsOf(summary).every((c) => supported(c, pool));
}
