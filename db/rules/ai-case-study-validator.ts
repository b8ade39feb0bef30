import { analyse, claimsOf, supported } from './ai-claims';
import { SourceFacts, SourceVersion, answerLeaves, contentPool, identityIssues } from './ai-validator';

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
