import type { ProofContent } from '../entities/proof-version';

export interface SemanticDiff {
  changed: boolean;
  words: { added: string[]; removed: string[] };
  numbers: { added: string[]; removed: string[] };
  rating: { from: number | null; to: number | null } | null;
  attribution: { added: string[]; removed: string[]; changed: string[] };
  title: { from: string | null; to: string | null } | null;
}

const NUMBER = /\d+(?:[.,]\d+)*%?/g;

function wordsOf(text: string): string[] {
  return [...new Set(text.replace(NUMBER, ' ').toLowerCase().match(/[\p{L}'’-]+/gu) ?? [])];
}

function numbersOf(text: string): string[] {
  return [...new Set(text.match(NUMBER) ?? [])];
}

const minus = (a: string[], b: string[]) => a.filter((x) => !b.includes(x)).sort();

function prose(content: ProofContent): string {
  return `${content.title ?? ''} ${content.text ?? ''}`;
}

/**
 * What a derivative changed against its parent, in the terms a reviewer checks: words, numbers (an
 * invented figure is the classic risk), the rating and the attribution. Pure, so tests pin it exactly.
 */
export function semanticDiff(parent: ProofContent, next: ProofContent): SemanticDiff {
  const before = prose(parent);
  const after = prose(next);
  const words = { added: minus(wordsOf(after), wordsOf(before)), removed: minus(wordsOf(before), wordsOf(after)) };
  const numbers = { added: minus(numbersOf(after), numbersOf(before)), removed: minus(numbersOf(before), numbersOf(after)) };
  const oldRating = parent.rating ?? null;
  const newRating = next.rating ?? null;
  const rating = oldRating === newRating ? null : { from: oldRating, to: newRating };
  const a = parent.attribution ?? {};
  const b = next.attribution ?? {};
  const attribution = {
    added: minus(Object.keys(b), Object.keys(a)),
    removed: minus(Object.keys(a), Object.keys(b)),
    changed: Object.keys(a).filter((k) => k in b && a[k] !== b[k]).sort(),
  };
  const title = (parent.title ?? null) === (next.title ?? null) ? null : { from: parent.title ?? null, to: next.title ?? null };
  const changed = words.added.length + words.removed.length + numbers.added.length + numbers.removed.length
    + attribution.added.length + attribution.removed.length + attribution.changed.length > 0
    || rating !== null || title !== null || (parent.text ?? '') !== (next.text ?? '');
  return { changed, words, numbers, rating, attribution, title };
}
