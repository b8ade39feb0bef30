import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { TeammateRole } from '../../db/entities/teammate';
import { lookupServiceKey, touchServiceKey } from '../../db/platform/key-authentication';
import { WindowLeases, WindowUse } from '../../db/platform/rate-windows';
import {
  SERVICE_KEY_PATTERN, ServiceKeyView, viewServiceKey,
} from '../../db/platform/service-keys';
import { SESSION_COOKIE, SESSION_TOKEN_PATTERN, SessionPrincipal, lookupSession } from '../../db/platform/sessions';
import { safeEqual } from '../../db/rules/secrets';
import { Config } from '../../runtime/config';
import { principalIdOf } from '../../db/rules/room-rules';
import { ServiceError, forbidden, invalidCredential } from '../../runtime/service-error';
import { EndUserIdentity, verifyIdentityToken } from './identity-token';

/**
 * public: no credential. key: service key only. session: a signed-in teammate (workspace).
 * identity: a signed end-user token only. key-or-identity: either.
 */
export type AuthMode = 'public' | 'key' | 'session' | 'identity' | 'key-or-identity';

export type KeyPrincipal = { kind: 'key' } & ServiceKeyView;

export type Principal =
  | KeyPrincipal
  | ({ kind: 'session' } & SessionPrincipal)
  | ({ kind: 'identity' } & EndUserIdentity);

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Scope a key needs for this route. */
    scope?: string;
    /** False for the few key routes that work without a product (whoami). */
    productRequired?: boolean;
    /** Workspace roles allowed; every role when absent. */
    roles?: TeammateRole[];
    /** What a service key hears on a workspace route: FORBIDDEN, or HUMAN_APPROVAL_REQUIRED for decisions. */
    keyRefusal?: 'FORBIDDEN' | 'HUMAN_APPROVAL_REQUIRED';
    /**
     * Rooms (docs/rooms.md#credentials-and-refusals): a valid end-user token on a key-only or session-only route is 403 FORBIDDEN
     * rather than a bad credential; the token is still checked (and a write consumes its nonce) first.
     */
    identityRefusal?: boolean;
    /** An end user's requests here count in its own one-minute window, as a key's do (Rooms, the inbox's reads). */
    endUserWindow?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyInstance {
    /** This process's units of the shared one-minute rate windows. */
    rateWindows: WindowLeases;
  }
}

/** Route options of workspace routes only owners and admins may call, with a session (never a key). */
export const OWNERS_AND_ADMINS = { auth: 'session' as const, roles: ['owner' as const, 'admin' as const] };
/** The same for decisions a person must take: a service key hears HUMAN_APPROVAL_REQUIRED. */
export const HUMAN_DECISION = { ...OWNERS_AND_ADMINS, keyRefusal: 'HUMAN_APPROVAL_REQUIRED' as const };

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header === undefined) return null;
  const match = /^Bearer ([^\s]+)$/i.exec(header);
  if (!match) throw invalidCredential('the Authorization header must be "Bearer <credential>"');
  return match[1];
}

/** Cookies as @fastify/cookie parsed them (RFC 6265, percent-decoded). */
function cookie(request: FastifyRequest, name: string): string | null {
  return request.cookies?.[name] ?? null;
}

export function keyPrincipal(request: FastifyRequest): KeyPrincipal {
  if (request.principal?.kind !== 'key') throw new Error('route is not key-authenticated');
  return request.principal;
}

export function sessionPrincipal(request: FastifyRequest): { kind: 'session' } & SessionPrincipal {
  if (request.principal?.kind !== 'session') throw new Error('route is not session-authenticated');
  return request.principal;
}

/**
 * Counts a request of `subject` in its one-minute window: the window's headers on every counted answer,
 * and 429 with retry-after once it is full.
 */
export async function enforceRate(reply: FastifyReply, subject: string, limit: number): Promise<void> {
  const rate: WindowUse = await reply.server.rateWindows.use(subject, limit);
  reply.header('x-ratelimit-limit', String(rate.limit));
  reply.header('x-ratelimit-remaining', String(rate.remaining));
  reply.header('x-ratelimit-reset', String(rate.reset));
  if (rate.limited) {
    const wait = Math.max(1, rate.reset - Math.floor(Date.now() / 1000));
    throw new ServiceError('RATE_LIMITED', `more than ${rate.limit} requests this minute`, null, { 'retry-after': String(wait) });
  }
}

async function authenticateKey(
  ds: DataSource, config: Config, request: FastifyRequest, reply: FastifyReply, secret: string | null,
): Promise<KeyPrincipal> {
  if (secret === null) {
    throw invalidCredential(request.headers.cookie
      ? 'session cookies are not accepted here; send Authorization: Bearer svk_...'
      : 'missing Authorization: Bearer svk_... header');
  }
  if (!SERVICE_KEY_PATTERN.test(secret)) throw invalidCredential('the service key is malformed');
  const found = await lookupServiceKey(ds, secret);
  if (!found) throw invalidCredential('the service key is not recognised');
  const { key, productActive } = found;
  if (key.revokedAt) throw invalidCredential('the service key has been revoked');
  if (key.expiresAt.getTime() <= Date.now()) throw invalidCredential('the service key has expired');
  // A revoked or expired key's requests are not counted; a refusal after this point is.
  await enforceRate(reply, key.id, config.rateLimitPerMinute);
  if (key.environment !== config.environment) {
    throw new ServiceError('ENVIRONMENT_SCOPE_MISMATCH', `the key is for environment "${key.environment}"; this deployment serves "${config.environment}"`);
  }
  const cfg = request.routeOptions.config;
  if (cfg.productRequired !== false) {
    if (key.productId === null) throw new ServiceError('PRODUCT_SCOPE_REQUIRED', 'this endpoint needs a key issued for a product');
    if (productActive === false) throw new ServiceError('PRODUCT_SCOPE_UNAVAILABLE', 'the key\'s product is inactive');
  }
  if (cfg.scope && !key.scopes.includes(cfg.scope)) {
    throw new ServiceError('INSUFFICIENT_SCOPE', `the key lacks the scope ${cfg.scope}`, { requiredScope: cfg.scope });
  }
  if (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > 60_000) await touchServiceKey(ds, key.id);
  return { kind: 'key', ...viewServiceKey(key) };
}

async function authenticateSession(ds: DataSource, request: FastifyRequest): Promise<Principal> {
  const cfg = request.routeOptions.config;
  const secret = bearer(request);
  if (secret !== null && secret.startsWith('svk_')) {
    const code = cfg.keyRefusal ?? 'FORBIDDEN';
    const message = code === 'HUMAN_APPROVAL_REQUIRED'
      ? 'only a person in the workspace may do this'
      : 'service keys are not accepted on workspace endpoints; sign in as a teammate';
    throw new ServiceError(code, message);
  }
  const token = cookie(request, SESSION_COOKIE);
  if (token === null) throw invalidCredential(`sign in: the ${SESSION_COOKIE} cookie is missing`);
  if (!SESSION_TOKEN_PATTERN.test(token)) throw invalidCredential('the workspace session is malformed');
  const session = await lookupSession(ds, token);
  if (!session) throw invalidCredential('the workspace session has expired or was signed out');
  if (WRITE_METHODS.has(request.method)) {
    const csrf = request.headers['x-csrf-token'];
    if (typeof csrf !== 'string' || !safeEqual(csrf, session.csrfToken)) {
      throw forbidden('writes need the session\'s x-csrf-token header');
    }
  }
  if (cfg.roles && !cfg.roles.includes(session.role)) {
    throw forbidden(`this needs the role ${cfg.roles.join(' or ')}`);
  }
  return { kind: 'session', ...session };
}

/** Authenticates every request by its route's `auth` mode before the body is read. */
export function registerAuth(app: FastifyInstance, ds: DataSource, config: Config): void {
  /** Counts an end user's request in its principal's own window where the route declares `endUserWindow`. */
  async function limitEndUser(request: FastifyRequest, reply: FastifyReply, identity: EndUserIdentity): Promise<void> {
    if (!request.routeOptions.config.endUserWindow) return;
    await enforceRate(reply, principalIdOf(identity.productId, 'end_user', identity.endUserId), config.rateLimitPerMinute);
  }

  app.decorate('rateWindows', new WindowLeases(ds));
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    const mode = request.routeOptions.config.auth ?? 'public';
    if (mode === 'public') return;
    if (request.routeOptions.config.identityRefusal && (mode === 'key' || mode === 'session')) {
      const secret = bearer(request);
      if (secret !== null && !secret.startsWith('svk_')) {
        const identity = await verifyIdentityToken(ds, secret, {
          consumeNonce: WRITE_METHODS.has(request.method), maxTtlSeconds: config.identityTokenMaxTtlSeconds,
        });
        await limitEndUser(request, reply, identity);
        throw forbidden('end users may not do this; it takes a service key or a teammate');
      }
    }
    if (mode === 'session') {
      request.principal = await authenticateSession(ds, request);
      return;
    }
    const secret = bearer(request);
    const isKey = secret !== null && secret.startsWith('svk_');
    if (mode === 'key' || (mode === 'key-or-identity' && (isKey || secret === null))) {
      request.principal = await authenticateKey(ds, config, request, reply, secret);
      return;
    }
    if (isKey) throw new ServiceError('KEY_AUDIENCE_MISMATCH', 'this endpoint takes a signed end-user token, not a service key');
    if (secret === null) throw invalidCredential('missing Authorization: Bearer <end-user token> header');
    const identity = await verifyIdentityToken(ds, secret, {
      consumeNonce: WRITE_METHODS.has(request.method),
      maxTtlSeconds: config.identityTokenMaxTtlSeconds,
    });
    request.principal = { kind: 'identity', ...identity };
    await limitEndUser(request, reply, identity);
  });
}
