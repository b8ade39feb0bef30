import { Analysed, PhraseMatch, analyse, claimsOf, findPhrases, poolOf, supported } from './ai-claims';

/**
 * The validator of docs/ai.md#the-validator: the lexicons, the facts and the checks every model answer passes before anyone
 * sees it; summaries (ai-summary-validator), ask drafts (ai-ask-policy) and case studies
 * (ai-case-study-validator) apply them. Pure: the caller gathers the facts (source versions, incentive,
 * verification, the consent grant).
 */

// ---- lexicons (docs/ai.md#the-validator) -------------------------------------------------------------------

export const plural = (...words: string[]) => words.flatMap((w) => [w, `${w}s`]);

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

export const live = (matches: PhraseMatch[]) => matches.filter((m) => !m.negated);

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

export function answerLeaves(value: unknown, out: Array<string | number>): Array<string | number> {
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

export type Found = { code: IssueCode; detail: string };

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

export interface Pools {
  content: Set<string>;
  incentive: Set<string>;
  consent: Set<string>;
}

export function poolsOf(s: SourceFacts): Pools {
  return {
    content: contentPool(s.version),
    incentive: poolOf(s.incentive.offered ? s.incentive.description : null),
    consent: poolOf(s.grant?.validUntil ?? null),
  };
}

/** Every issue of one model sentence or caveat (§4.2), without the missing_* ones. */
export function textIssues(a: Analysed, s: SourceFacts, pools: Pools, isCaveat: boolean): Found[] {
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

// ---- signal analysis (§9) --------------------------------------------------------------------

/** A signal summary may restate only numbers of the signal and never an e-mail address. */
export function signalSummaryAllowed(summary: string, signal: { title: string; body: string }): boolean {
  const pool = poolOf(signal.title, signal.body);
  return !EMAIL.test(summary) && claimsOf(summary).every((c) => supported(c, pool));
}
