import { createHmac } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Product } from '../../db/entities';
import { consumeNonce } from '../../db/platform/identity-nonces';
import { safeEqual } from '../../db/rules/secrets';
import { ServiceError, invalidCredential } from '../../runtime/service-error';

export interface EndUserIdentity {
  organizationId: string;
  productId: string;
  endUserId: string;
  expiresAt: Date;
  nonce: string | null;
}

const MAX_TOKEN_LENGTH = 4096;
const SEGMENT = /^[A-Za-z0-9_-]+$/;
const CLOCK_SKEW_SECONDS = 60;
const KID = /^[A-Za-z0-9_-]{1,100}$/;
const SUB = /^[^\u0000-\u001f\u007f]{1,200}$/;
const NONCE = /^[\x21-\x7e]{8,200}$/;

function decodeSegment(segment: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through to the refusal below
  }
  throw invalidCredential('end-user token is malformed');
}

export interface VerifyOptions {
  /** Writes consume the token's nonce so that each token acts once. */
  consumeNonce: boolean;
  maxTtlSeconds: number;
  now?: Date;
}

/**
 * Verifies a signed end-user token: HS256 only (the algorithm is pinned, never read from the token's
 * choice), `kid` names the product's identity key, `exp` is required and short, `sub` is the end user.
 */
export async function verifyIdentityToken(ds: DataSource, token: string, opts: VerifyOptions): Promise<EndUserIdentity> {
  if (token.length > MAX_TOKEN_LENGTH) throw invalidCredential('end-user token is malformed');
  const parts = token.split('.');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p))) throw invalidCredential('end-user token is malformed');
  const [headerPart, payloadPart, signature] = parts;
  const header = decodeSegment(headerPart);
  if (header.alg !== 'HS256') throw invalidCredential('end-user token must be signed with HS256');
  if (typeof header.kid !== 'string' || !KID.test(header.kid)) throw invalidCredential('end-user token has no valid kid');

  const product = await ds.getRepository(Product).findOneBy({ identityKeyId: header.kid });
  if (!product) throw invalidCredential('end-user token names an unknown identity key');
  const expected = createHmac('sha256', product.identitySecret).update(`${headerPart}.${payloadPart}`).digest('base64url');
  if (!safeEqual(signature, expected)) throw invalidCredential('end-user token signature does not verify');
  if (!product.active) throw new ServiceError('PRODUCT_SCOPE_UNAVAILABLE', 403, 'the product is inactive');

  const claims = decodeSegment(payloadPart);
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  const { sub, exp, iat, nbf, nonce } = claims;
  if (typeof sub !== 'string' || !SUB.test(sub)) throw invalidCredential('end-user token needs a sub claim of 1 to 200 printable characters');
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw invalidCredential('end-user token needs an exp claim');
  if (exp <= now) throw invalidCredential('end-user token has expired');
  if (exp - now > opts.maxTtlSeconds) {
    throw invalidCredential(`end-user token lives too long: exp may be at most ${opts.maxTtlSeconds} s ahead`);
  }
  if (iat !== undefined && (typeof iat !== 'number' || iat > now + CLOCK_SKEW_SECONDS)) {
    throw invalidCredential('end-user token iat is in the future');
  }
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now + CLOCK_SKEW_SECONDS)) {
    throw invalidCredential('end-user token is not valid yet (nbf)');
  }
  if (nonce !== undefined && (typeof nonce !== 'string' || !NONCE.test(nonce))) {
    throw invalidCredential('end-user token nonce must be 8 to 200 printable ASCII characters');
  }
  const expiresAt = new Date(exp * 1000);
  if (opts.consumeNonce) {
    if (typeof nonce !== 'string') throw invalidCredential('end-user token needs a nonce for a write');
    if (!(await consumeNonce(ds, product.id, nonce, expiresAt))) {
      throw invalidCredential('end-user token nonce was already used; mint one token per write');
    }
  }
  return {
    organizationId: product.organizationId,
    productId: product.id,
    endUserId: sub,
    expiresAt,
    nonce: typeof nonce === 'string' ? nonce : null,
  };
}

/** Mints a token the way a customer's server would; used by the CLI's examples and by tests. */
export function signIdentityToken(keyId: string, secret: string, claims: Record<string, unknown>): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT', kid: keyId })).toString('base64url');
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}
