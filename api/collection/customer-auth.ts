import { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { DataSource } from 'typeorm';
import { SECRET_PREFIX, SecretKind, SecretRow, lookupSecret, secretPattern, ANY_CUSTOMER_SECRET } from '../../db/collection/secrets';
import { sha256Hex } from '../../db/rules/secrets';
import { Config } from '../../runtime/config';
import { ServiceError } from '../../runtime/service-error';
import { enforceRate } from '../plugins/auth';
import { clientAddressDigest } from '../plugins/client-address';

/**
 * Customers have no account: each secret comes from their own link and travels in a header. Checks
 * run in the order docs/collection.md#endpoints-customers fixes: credential, rate limit, binding of the path's ids to the
 * secret, then (in Fastify's later stages) body and state.
 */

declare module 'fastify' {
  interface FastifyRequest {
    customerSecret: SecretRow | null;
  }
}

export const unauthorized = (message: string) => new ServiceError('UNAUTHORIZED', message);

const HEADERS: Record<SecretKind, string> = {
  draft_session: 'x-draft-session', continuation: 'x-link-token', control: 'x-control-token', upload: 'x-upload-token',
  interview: 'x-interview-token',
};

/** A secret in a URL ends up in logs and histories: refused before anything else is looked at. */
export function refuseSecretsInUrl(request: FastifyRequest): void {
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
  let decoded = query;
  try {
    decoded = decodeURIComponent(query);
  } catch {
    // an undecodable query is judged as it came
  }
  if (ANY_CUSTOMER_SECRET.test(decoded)) {
    throw new ServiceError('INVALID_INPUT', 'secrets are never accepted in a URL; send them in their header');
  }
}

/** Reads a header secret of a given kind; missing or malformed is 401. */
export function headerSecret(request: FastifyRequest, header: string, prefix: string): string {
  const value = request.headers[header];
  if (value === undefined) throw unauthorized(`missing ${header} header`);
  if (typeof value !== 'string' || !secretPattern(prefix).test(value)) throw unauthorized(`the ${header} header is malformed`);
  return value;
}

export interface CustomerAuthOptions {
  /** Path parameter that must be the secret's draft, and the one that must be its upload. */
  draftParam?: string;
  uploadParam?: string;
  /** Part PUTs count against a larger budget (docs/collection.md#endpoints-customers). */
  rateMultiplier?: number;
}

/** onRequest hook for a route that takes one kind of customer secret. */
export function customerAuth(ds: DataSource, config: Config, kind: SecretKind, opts: CustomerAuthOptions = {}): onRequestHookHandler {
  return async (request, reply) => {
    const secret = headerSecret(request, HEADERS[kind], SECRET_PREFIX[kind]);
    const row = await lookupSecret(ds, kind, secret);
    if (!row) throw unauthorized(`the ${HEADERS[kind]} secret is not recognised`);
    await enforceRate(reply, `collect:${row.digest.slice(0, 32)}`, config.rateLimitPerMinute * (opts.rateMultiplier ?? 1));
    const params = request.params as Record<string, string>;
    if (opts.draftParam && params[opts.draftParam] !== row.draftId) throw new ServiceError('NOT_FOUND', 'draft not found');
    if (opts.uploadParam && params[opts.uploadParam] !== row.uploadId) throw new ServiceError('NOT_FOUND', 'upload not found');
    if (row.expiresAt && row.expiresAt.getTime() <= Date.now() && (kind === 'control' || kind === 'interview')) {
      throw new ServiceError('EXPIRED', `this ${kind} link has expired`);
    }
    request.customerSecret = row;
  };
}

/** A public customer route is counted per client address. */
export async function countPublic(config: Config, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  await enforceRate(reply, `collect-ip:${clientAddressDigest(request.ip).slice(0, 32)}`, config.rateLimitPerMinute);
}

/** A route whose secret is checked by the handler (personal and continuation links) is counted per secret. */
export async function countSecret(config: Config, reply: FastifyReply, secret: string): Promise<void> {
  await enforceRate(reply, `collect:${sha256Hex(secret).slice(0, 32)}`, config.rateLimitPerMinute);
}

export function secretOf(request: FastifyRequest): SecretRow {
  if (!request.customerSecret) throw new Error('route is not customer-authenticated');
  return request.customerSecret;
}
