import { timestampedHmacHex, timestampedHmacProblem } from './timestamped-hmac';

// node:crypto only, through the one rule it builds on: a receiver copies this file and that one.

export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The `service-signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signWebhook(secret: string, body: string | Buffer, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${timestampedHmacHex(secret, timestamp, body)}`;
}

export interface VerifyOptions {
  /** The raw request body exactly as received, before any JSON parsing. */
  body: string | Buffer;
  /** The `service-signature` header. */
  header: string | undefined;
  /** The endpoint's signing secret (`whsec_...`); several during your own key rollover. */
  secrets: string | string[];
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * True when the header carries a valid signature made within the tolerance (5 minutes either way).
 * A missing, short or garbled header is a plain false, never an exception. Several `v1=` values are
 * accepted; each is compared in constant time after a length check.
 */
export function verifyWebhookSignature(opts: VerifyOptions): boolean {
  if (typeof opts.header !== 'string' || opts.header.length > 4096) return false;
  let timestamp: number | undefined;
  const candidates: string[] = [];
  for (const part of opts.header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value !== undefined && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value)) candidates.push(value);
  }
  if (timestamp === undefined || candidates.length === 0) return false;
  const nowSeconds = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  const secrets = Array.isArray(opts.secrets) ? opts.secrets : [opts.secrets];
  return secrets.some((secret) => timestampedHmacProblem({
    secret, timestamp: timestamp!, payload: opts.body, signatures: candidates, nowSeconds,
    toleranceSeconds: opts.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS,
  }) === null);
}
