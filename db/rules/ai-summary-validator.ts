import { Analysed, analyse, canonicalNumber, findPhrases } from './ai-claims';
import {
  ConsentFacts, Found, Issue, IssueCode, SourceFacts, allowedChannels, isIncentiveText, poolsOf, textIssues,
} from './ai-validator';

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
