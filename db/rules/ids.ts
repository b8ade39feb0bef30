import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function base32(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

/**
 * Prefixed, opaque identifiers. The leading time part keeps ids of one kind roughly in creation
 * order, which makes them readable in logs and the Temporal UI; the random part makes them unguessable.
 */
export function newId(prefix: string): string {
  const time = Date.now().toString(32).padStart(9, '0');
  return `${prefix}_${time}${base32(randomBytes(16))}`;
}

export const ID_PATTERN = /^[a-z]{2,5}_[0-9a-z]{10,40}$/;

/**
 * Anonymous end-user ids are minted by the SDK as `anon_` plus at least 16 random characters. Another
 * end user never sees one (Rooms masks them), and a merge takes proof of holding it, not just the id.
 */
export const ANONYMOUS_ID = /^anon_[A-Za-z0-9_-]{16,100}$/;
