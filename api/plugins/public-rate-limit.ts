import fastifyRateLimit from '@fastify/rate-limit';
import { FastifyInstance } from 'fastify';
import { DataSource } from 'typeorm';
import { takeUnits } from '../../db/platform/rate-windows';
import { sha256Hex } from '../../db/rules/secrets';
import { Config } from '../../runtime/config';
import { ServiceError } from '../../runtime/service-error';

export const PUBLIC_PREFIX = '/api/public/';

interface Counted { current: number; ttl: number }

/** Units a process takes at once: one in 64 of the limit, so a busy address costs a query per block. */
const LEASE_SHARE = 64;

/**
 * @fastify/rate-limit's store over rate_limit_windows: one row per client address and UTC minute, so
 * every API process counts into the same window (the same table the key limit uses). A process takes
 * units in blocks (a lease) and spends them locally, instead of a statement per request: the window
 * never passes the limit (no overshoot), and an address may be refused early by at most the units that
 * other processes took and have not spent, (processes − 1) × ⌈limit / 64⌉ − 1.
 */
function postgresStore(ds: DataSource) {
  const leases = new Map<string, { left: number; count: number; endsAt: number }>();
  return class PostgresRateLimitStore {
    incr(key: string, done: (err: Error | null, counted?: Counted) => void, _timeWindow: number, max: number): void {
      const now = Date.now();
      const lease = leases.get(key);
      if (lease && lease.endsAt > now && lease.left > 0) {
        lease.left -= 1;
        done(null, { current: lease.count - lease.left, ttl: lease.endsAt - now });
        return;
      }
      takeUnits(ds, key, Math.max(1, Math.ceil(max / LEASE_SHARE)), max).then((taken) => {
        const ttl = Math.max(1, taken.endsAt - Date.now());
        if (taken.granted === 0) {
          leases.delete(key);
          done(null, { current: max + 1, ttl });
          return;
        }
        if (leases.size >= 10_000) for (const [k, l] of leases) if (l.endsAt <= Date.now()) leases.delete(k);
        leases.set(key, { left: taken.granted - 1, count: taken.count, endsAt: taken.endsAt });
        done(null, { current: taken.count - (taken.granted - 1), ttl });
      }, (err: Error) => done(err));
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
export async function registerPublicRateLimit(app: FastifyInstance, ds: DataSource, config: Config): Promise<void> {
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
    store: postgresStore(ds),
    // Addresses are counted by digest: the table never holds a visitor's address.
    keyGenerator: (request) => `public-ip:${sha256Hex(request.ip).slice(0, 32)}`,
    // The window end goes out as unix seconds (windowEnd above), as on key routes, not as seconds left.
    addHeaders: { 'x-ratelimit-reset': false },
    addHeadersOnExceeding: { 'x-ratelimit-reset': false },
    errorResponseBuilder: (_request, context) => new ServiceError('RATE_LIMITED', 429, `more than ${context.max} requests this minute from this address`, null, {
      'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))),
    }),
  });
}
