import { createHmac } from 'node:crypto';
import { JWTPayload, ProtectedHeaderParameters, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { DataSource } from 'typeorm';
import { Product } from '../../db/entities';
import { consumeNonce } from '../../db/platform/identity-nonces';
import { ServiceError, invalidCredential } from '../../runtime/service-error';

export interface EndUserIdentity {
  organizationId: string;
  productId: string;
  endUserId: string;
  expiresAt: Date;
  nonce: string | null;
}

const MAX_TOKEN_LENGTH = 4096;
const CLOCK_SKEW_SECONDS = 60;
const KID = /^[A-Za-z0-9_-]{1,100}$/;
const SUB = /^[^\u0000-\u001f\u007f]{1,200}$/;
const NONCE = /^[\x21-\x7e]{8,200}$/;

export interface VerifyOptions {
  /** Writes consume the token's nonce so that each token acts once. */
  consumeNonce: boolean;
  maxTtlSeconds: number;
  now?: Date;
}

/** jose's refusals in the spec's terms; anything else it throws is a malformed token. */
function refusal(err: unknown): ServiceError {
  if (err instanceof joseErrors.JWTExpired) return invalidCredential('end-user token has expired');
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) return invalidCredential('end-user token signature does not verify');
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return invalidCredential('end-user token must be signed with HS256');
  if (err instanceof joseErrors.JOSENotSupported) return invalidCredential('end-user token has a crit header this service does not understand');
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'iat') return invalidCredential('end-user token iat is in the future');
    if (err.claim === 'nbf') return invalidCredential('end-user token is not valid yet (nbf)');
    if (err.claim === 'exp') return invalidCredential('end-user token needs an exp claim');
    if (err.claim === 'typ') return invalidCredential('end-user token typ must be JWT');
    return invalidCredential(`end-user token claim ${err.claim} is invalid`);
  }
  return invalidCredential('end-user token is malformed');
}

/**
 * Verifies a signed end-user token through `jose`: HS256 pinned (never the token's choice), any `crit`
 * header refused, `typ` absent or JWT, `kid` names the product's identity key, `exp` required and
 * short, `sub` the end user; the nonce rule is ours.
 */
export async function verifyIdentityToken(ds: DataSource, token: string, opts: VerifyOptions): Promise<EndUserIdentity> {
  if (token.length > MAX_TOKEN_LENGTH) throw invalidCredential('end-user token is malformed');
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw invalidCredential('end-user token is malformed');
  }
  if (token.split('.').length !== 3) throw invalidCredential('end-user token is malformed');
  if (header.alg !== 'HS256') throw invalidCredential('end-user token must be signed with HS256');
  if (typeof header.kid !== 'string' || !KID.test(header.kid)) throw invalidCredential('end-user token has no valid kid');
  if (header.typ !== undefined && !/^(application\/)?jwt$/i.test(header.typ)) throw invalidCredential('end-user token typ must be JWT');

  const product = await ds.getRepository(Product).findOneBy({ identityKeyId: header.kid });
  if (!product) throw invalidCredential('end-user token names an unknown identity key');
  const nowDate = opts.now ?? new Date();
  let claims: JWTPayload;
  try {
    ({ payload: claims } = await jwtVerify(token, Buffer.from(product.identitySecret, 'utf8'), {
      algorithms: ['HS256'], requiredClaims: ['exp'], clockTolerance: CLOCK_SKEW_SECONDS, currentDate: nowDate,
    }));
  } catch (err) {
    throw refusal(err);
  }
  if (!product.active) throw new ServiceError('PRODUCT_SCOPE_UNAVAILABLE', 'the product is inactive');

  const now = Math.floor(nowDate.getTime() / 1000);
  const { sub, exp, iat, nonce } = claims as JWTPayload & { nonce?: unknown };
  if (typeof sub !== 'string' || !SUB.test(sub)) throw invalidCredential('end-user token needs a sub claim of 1 to 200 printable characters');
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw invalidCredential('end-user token needs an exp claim');
  // jose allows the clock tolerance past exp; an expired token is refused exactly.
  if (exp <= now) throw invalidCredential('end-user token has expired');
  if (exp - now > opts.maxTtlSeconds) {
    throw invalidCredential(`end-user token lives too long: exp may be at most ${opts.maxTtlSeconds} s ahead`);
  }
  if (iat !== undefined && iat > now + CLOCK_SKEW_SECONDS) throw invalidCredential('end-user token iat is in the future');
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
