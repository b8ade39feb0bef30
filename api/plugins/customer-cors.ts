import fastifyCors, { FastifyCorsOptions } from '@fastify/cors';
import { FastifyInstance, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { CustomerOrigins, customerOriginAllowed, customerOrigins } from '../../db/collection/domains';
import { Config } from '../../runtime/config';
import { ServiceError } from '../../runtime/service-error';
import { isCustomerRequest } from './route-traits';

/** What a customer page sends and reads across origins; never cookies (credentials stay off). */
const ALLOWED_HEADERS = [
  'content-type', 'range', 'authorization', 'x-draft-session', 'x-link-token', 'x-control-token', 'x-upload-token',
  'x-interview-token', 'x-part-sha256', 'x-request-id',
];
const EXPOSED_HEADERS = [
  'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'content-range', 'accept-ranges', 'x-request-id',
];

/**
 * The allowed origins, read at most once per `ttlMs` by this process (0: on every request). A load that
 * starts after a change sees it, and the one in use started at most `ttlMs` ago, so a change to domains,
 * flows or their `allowedOrigins` takes effect within `ttlMs` plus one query (docs/collection.md).
 * Requests during a load share it; a failed load is not kept.
 */
function cachedCustomerOrigins(ds: DataSource, ttlMs: number): () => Promise<CustomerOrigins> {
  let entry: { loadedFrom: number; origins: Promise<CustomerOrigins> } | null = null;
  return () => {
    const now = Date.now();
    if (!entry || now - entry.loadedFrom >= ttlMs) {
      const loading = { loadedFrom: now, origins: customerOrigins(ds) };
      entry = loading;
      loading.origins.catch(() => {
        if (entry === loading) entry = null;
      });
    }
    return entry.origins;
  };
}

/**
 * CORS for the customer routes only (`/api/proof/*`, docs/collection.md#endpoints-customers), through @fastify/cors: the
 * collection page's origin, verified domains and live flows' `allowedOrigins` get the headers; other
 * routes never send them. A preflight from any other origin is 403 FORBIDDEN, so a browser sends no
 * header-carrying request from there; a simple request from there goes on without CORS headers, and the
 * browser keeps its answer from the page (the no-JS form still posts).
 */
export async function registerCustomerCors(app: FastifyInstance, ds: DataSource, config: Config): Promise<void> {
  const pageOrigin = new URL(config.collectPageUrl).origin;
  const origins = cachedCustomerOrigins(ds, config.customerOriginsCacheMs);
  const allowed = (origin: string): FastifyCorsOptions => ({
    origin, credentials: false, methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS, exposedHeaders: EXPOSED_HEADERS, maxAge: 600, strictPreflight: false,
  });
  // A callback delegator: every other route is answered synchronously and pays nothing for CORS.
  const delegator = (request: FastifyRequest, done: (err: Error | null, options: FastifyCorsOptions) => void): void => {
    const origin = request.headers.origin;
    if (!isCustomerRequest(request) || typeof origin !== 'string') return done(null, { origin: false });
    if (origin === pageOrigin) return done(null, allowed(origin));
    origins().then((known) => {
      if (customerOriginAllowed(known, origin)) return done(null, allowed(origin));
      if (request.method === 'OPTIONS') return done(new ServiceError('FORBIDDEN', `the origin ${origin.slice(0, 200)} may not call this route`),
        { origin: false });
      done(null, { origin: false });
    }, (err: Error) => done(err, { origin: false }));
  };
  await app.register(fastifyCors, { delegator });
}
