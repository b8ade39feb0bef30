import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes as 43 base64url characters behind a prefix (svk_, svs_, ...). */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

export function sha256Hex(value: string | Buffer): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison that first refuses different lengths, so a short input is a clean "no". */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
