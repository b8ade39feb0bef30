import fastifyRateLimit from '@fastify/rate-limit';
import { FastifyInstance } from 'fastify';
import { WindowLeases } from '../../db/platform/rate-windows';
import { Config } from '../../runtime/config';
import { ServiceError } from '../../runtime/service-error';
import { clientAddressDigest } from './client-address';

export const PUBLIC_PREFIX = '/api/public/';

interface Counted { current: number; ttl: number }

/**
 * @fastify/rate-limit's store over this process's units of rate_limit_windows (`WindowLeases`): one row
 * per client address and UTC minute, so every API process counts into the same window, taken in blocks.
 */
function leasedStore(windows: WindowLeases) {
  return class LeasedRateLimitStore {
    incr(key: string, done: (err: Error | null, counted?: Counted) => void, _timeWindow: number, max: number): void {
      windows.use(key, max).then(
        (use) => done(null, { current: use.limited ? max + 1 : max - use.remaining, ttl: use.ttlMs }),
        (err: Error) => done(err),
      );
    }

    // One window length for every public route, so each route shares this store.
    child(): this {
      return this;
    }
  };
}

/**
 * Every /api/public/* route is limited per client address (request.ip, which names the client behind
 * a proxy only when trustProxy is configured): `publicRateLimitPerMinute` per UTC minute, answered with
 * the x-ratelimit-* headers like key routes, and over it 429 RATE_LIMITED in the envelope with retry-after.
 */
export async function registerPublicRateLimit(app: FastifyInstance, config: Config): Promise<void> {
  // Runs before the plugin's own onRoute hook, which then limits each route that names a rateLimit.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(PUBLIC_PREFIX)) return;
    route.config = { ...(route.config as object), rateLimit: {} } as typeof route.config;
    const windowEnd = async (_request: unknown, reply: { header: (name: string, value: string) => unknown }) => {
      reply.header('x-ratelimit-reset', String(Math.ceil((Date.now() + 1) / 60_000) * 60));
    };
    route.onRequest = [windowEnd, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())] as typeof route.onRequest;
  });
  await app.register(fastifyRateLimit, {
    global: false,
    hook: 'onRequest',
    max: config.publicRateLimitPerMinute,
    timeWindow: 60_000,
    store: leasedStore(app.rateWindows),
    // Addresses are counted by digest: the table never holds a visitor's address.
    keyGenerator: (request) => `public-ip:${clientAddressDigest(request.ip).slice(0, 32)}`,
    // The window end goes out as unix seconds (windowEnd above), as on key routes, not as seconds left.
    addHeaders: { 'x-ratelimit-reset': false },
    addHeadersOnExceeding: { 'x-ratelimit-reset': false },
    errorResponseBuilder: (_request, context) => new ServiceError('RATE_LIMITED', `more than ${context.max} requests this minute from this address`, null, {
      'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))),
    }),
  });
}
