import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function base32(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return out;
}

// Random bytes are drawn from the operating system 4 KB at a time: an intake makes five ids, and a call for 16
// bytes each was a visible share of the API's time. Each byte is used once.
const pool = Buffer.alloc(4096);
let used = pool.length;

function randomSlice(size: number): Buffer {
  if (used + size > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += size;
  return pool.subarray(used - size, used);
}

/**
 * Prefixed, opaque identifiers. The leading time part keeps ids of one kind roughly in creation
 * order, which makes them readable in logs and the Temporal UI; the random part makes them unguessable.
 */
export function newId(prefix: string): string {
  const time = Date.now().toString(32).padStart(9, '0');
  return `${prefix}_${time}${base32(randomSlice(16))}`;
}

export const ID_PATTERN = /^[a-z]{2,5}_[0-9a-z]{10,40}$/;

/**
 * Anonymous end-user ids are minted by the SDK as `anon_` plus at least 16 random characters. Another
 * end user never sees one (Rooms masks them), and a merge takes proof of holding it, not just the id.
 */
export const ANONYMOUS_ID = /^anon_[A-Za-z0-9_-]{16,100}$/;
