import { createHmac, timingSafeEqual } from 'node:crypto';

// node:crypto only: runtime/webhook-signature.ts builds on it, and receivers copy both (docs/webhooks.md).

/** Hex HMAC-SHA256 keyed by the whole secret string over `<timestamp>.<payload>`. */
export function timestampedHmacHex(secret: string, timestamp: number, payload: string | Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest('hex');
}

export type TimestampedHmacProblem = 'mismatch' | 'stale' | 'future';

export interface TimestampedHmacCheck {
  secret: string;
  timestamp: number;
  payload: string | Buffer;
  /** The hex signatures the header carries; any one may match. */
  signatures: readonly string[];
  nowSeconds: number;
  toleranceSeconds: number;
}

/**
 * The rule Stripe's, the video host's and this service's own webhook signatures share: some signature
 * equals the HMAC over `<timestamp>.<payload>` (constant time after a length check), and the timestamp
 * is within the tolerance either way. The signature is judged first, so an unsigned request learns
 * nothing about the clock. Null when it verifies.
 */
export function timestampedHmacProblem(check: TimestampedHmacCheck): TimestampedHmacProblem | null {
  const expected = Buffer.from(timestampedHmacHex(check.secret, check.timestamp, check.payload), 'utf8');
  const matched = check.signatures.some((signature) => {
    const given = Buffer.from(signature, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matched) return 'mismatch';
  if (check.nowSeconds - check.timestamp > check.toleranceSeconds) return 'stale';
  if (check.timestamp - check.nowSeconds > check.toleranceSeconds) return 'future';
  return null;
}
