import { createHash } from 'node:crypto';

/**
 * Canonical JSON: object keys sorted by UTF-16 code units (JavaScript's default sort), no whitespace,
 * strings and numbers as JSON.stringify writes them, array order kept, undefined properties dropped.
 * Anyone can recompute a digest over it with a few lines in any language (README, "Proof API").
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const entries = Object.keys(record).sort()
      .filter((k) => record[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sha256OfCanonical(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}
