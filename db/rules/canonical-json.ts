import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * The name signed and hashed documents carry (`canonicalization`) since the cut-over to RFC 8785. A
 * signed document without it was signed before, over legacySortedKeysJson.
 */
export const CANONICALIZATION = 'RFC8785';

/** A value that has no JSON form: refused rather than silently written as something else. */
export class NotJsonError extends Error {}

function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

function assertJson(value: unknown, path: string, seen: Set<object>): void {
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'string') {
    if (hasLoneSurrogate(value)) throw new NotJsonError(`${path}: a lone surrogate is not Unicode text`);
    return;
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotJsonError(`${path}: ${value} is not a JSON number`);
    return;
  }
  if (typeof value !== 'object') throw new NotJsonError(`${path}: a ${typeof value} is not JSON`);
  if (seen.has(value)) throw new NotJsonError(`${path}: circular reference`);
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((entry, i) => {
      if (entry === undefined) throw new NotJsonError(`${path}[${i}]: undefined is not JSON`);
      assertJson(entry, `${path}[${i}]`, seen);
    });
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw new NotJsonError(`${path}: a ${proto?.constructor?.name ?? 'non-plain'} object is not JSON`);
    for (const [key, child] of Object.entries(value)) {
      if (hasLoneSurrogate(key)) throw new NotJsonError(`${path}: a property name with a lone surrogate is not Unicode text`);
      // An absent optional property, as JSON.stringify writes it: left out.
      if (child !== undefined) assertJson(child, `${path}.${key}`, seen);
    }
  }
  seen.delete(value);
}

/**
 * RFC 8785 (JSON Canonicalization Scheme) through the `canonicalize` package, so a verifier can use any
 * off-the-shelf JCS implementation. Values with no JSON form (undefined outside an object, NaN,
 * Infinity, bigint, functions, symbols, Dates and other class instances, lone surrogates, cycles) throw
 * NotJsonError; an object property that is undefined is left out.
 */
export function canonicalJson(value: unknown): string {
  assertJson(value, '$', new Set());
  return canonicalize(value)!;
}

export function sha256OfCanonical(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

/**
 * The sorted-keys form used before the cut-over: keys sorted by UTF-16 code units, no whitespace,
 * JSON.stringify for strings and numbers. For any value parsed from JSON it writes the same bytes as
 * RFC 8785; it is kept only so that documents signed before the cut-over keep verifying.
 */
export function legacySortedKeysJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : legacySortedKeysJson(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const entries = Object.keys(record).sort()
      .filter((k) => record[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${legacySortedKeysJson(record[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The canonical text a signed document was signed over: RFC 8785 when it names it, the legacy form when
 * it names nothing (signed before the cut-over), null for a canonicalization this service never used.
 */
export function signedTextOf(document: unknown): string | null {
  const named = document !== null && typeof document === 'object' && !Array.isArray(document)
    ? (document as Record<string, unknown>).canonicalization : undefined;
  try {
    if (named === CANONICALIZATION) return canonicalJson(document);
    if (named === undefined) return legacySortedKeysJson(document);
  } catch (err) {
    if (err instanceof NotJsonError) return null;
    throw err;
  }
  return null;
}
