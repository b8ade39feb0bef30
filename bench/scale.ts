import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { signIdentityToken } from '../api/plugins/identity-token';
import { Product } from '../db/entities';
import { createServiceKey } from '../db/platform/service-keys';
import { createSession } from '../db/platform/sessions';
import { installTemporalLogger } from '../runtime/temporal-logging';
import { Cleanup, startScratchTemporal } from '../test/support/servers';
import { HEAVY_END_USERS, MEMBERS_PER_ROOM, TOPICS, companyOf, endUserOf, readMarkerOf, roomLength, roomSeat, seedId } from './scale-seed';
import { BENCH_DATABASE_URL, BENCH_SECRET_KEYS, LARGE_SIGNALS, ScaleWorkspace, findWorkspace, openBenchDatabase } from './scale-workspaces';
import { startService } from './service';
import { quantile } from './stats';

/**
 * npm run bench:scale: every paged read a user makes, timed through the API of the service started as `npm start`
 * starts it, on the large workspace of bench:seed and on the small one (a thousandth of it), request by request in turn.
 * Each read is BENCH_REQUESTS (1,000) sequential requests a workspace, with varied parameters, following the next
 * cursor for up to PAGES pages before it starts again with the next parameters; the p99 of 1,000 is the tenth
 * slowest, where one of 300 was the third and moved with any single pause. Target: each read's p99 on the
 * large workspace within 1.5x of the small one's. Page sizes and parameters are those the small workspace also
 * fills (10 to 20 rows; its rarest values hold a few rows only), so both answer pages of the same size.
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 20);
const PAGES = 4;
const TARGET = 1.5;
/** BENCH_ONLY: a pattern of the read names to time (all by default). */
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '', 'i');
/** BENCH_PREWARM=0 times the reads with the database as the seed left it in memory. */
const PREWARM = process.env.BENCH_PREWARM !== '0';

interface Credentials {
  key: string;
  proofKey: string;
  session: { cookie: string; csrfToken: string };
  product: Product;
}

interface Request {
  path: string;
  headers: Record<string, string>;
}

/** One paged read: the first page for the n-th parameters, and where the answer's next page is. */
interface Read {
  name: string;
  first: (w: ScaleWorkspace, c: Credentials, n: number) => Request;
  next?: (body: unknown) => string | null;
  /** The query parameter that carries `next`'s answer. */
  cursorParam?: string;
}

const keyed = (key: string, path: string): Request => ({ path, headers: { authorization: `Bearer ${key}` } });
const asTeammate = (c: Credentials, path: string): Request => ({ path, headers: { cookie: c.session.cookie, 'x-csrf-token': c.session.csrfToken } });
const asEndUser = (c: Credentials, endUserId: string, path: string): Request => {
  const now = Math.floor(Date.now() / 1000);
  const token = signIdentityToken(c.product.identityKeyId, c.product.identitySecret, {
    sub: endUserId, iat: now, exp: now + 120, nonce: `bench-${randomBytes(8).toString('hex')}`,
  });
  return { path, headers: { authorization: `Bearer ${token}` } };
};
const pick = <T>(values: readonly T[], n: number): T => values[n % values.length];
const cursorOf = (body: unknown) => (body as { nextCursor: string | null }).nextCursor;
/** A heavy end user every other time, else one of the many. */
const endUser = (w: ScaleWorkspace, n: number) => (n % 2 === 0 ? `user-${(n / 2) % HEAVY_END_USERS}` : endUserOf(n * 37 + 1, w.size.endUsers));
/**
 * Reads made as an end user come from the same 20 end users in both workspaces: each end user's first request of a
 * minute takes a block of its rate window (a write), a cost of how many end users are active, not of the data.
 */
const ACTIVE_END_USERS = 20;
const activeEndUser = (w: ScaleWorkspace, n: number) => endUserOf((n % ACTIVE_END_USERS) * 37 + 1, w.size.endUsers);
/** Room and seat of the n-th room read: two rooms far apart, ten members each. */
const roomOf = (w: ScaleWorkspace, n: number) => ({ room: (n % 2) * Math.floor(w.size.rooms / 2), seat: Math.floor(n / 2) % MEMBERS_PER_ROOM });
const DAY = 86_400_000;

const READS: Read[] = [
  { name: 'signals, newest first', first: (_w, c) => keyed(c.key, '/api/v1/signals?limit=20'), next: cursorOf },
  {
    name: 'signals by category', next: cursorOf,
    first: (_w, c, n) => keyed(c.key, `/api/v1/signals?limit=20&category=${pick(['ux', 'support', 'feature', 'bug'], n)}`),
  },
  {
    name: 'signals since', next: cursorOf,
    first: (_w, c, n) => keyed(c.key, `/api/v1/signals?limit=20&since=${new Date(Date.now() - pick([30, 90, 180, 365], n) * DAY).toISOString()}`),
  },
  { name: "an end user's signals", next: cursorOf, first: (w, c, n) => keyed(c.key, `/api/v1/signals?limit=20&endUserId=${endUser(w, n)}`) },
  {
    name: 'threads by state', next: cursorOf,
    first: (_w, c, n) => keyed(c.key, `/api/v1/threads?limit=20&state=${pick(['open', 'pending', 'resolved', 'closed'], n)}`),
  },
  {
    name: 'threads by owner', next: cursorOf,
    first: (w, c, n) => keyed(c.key, `/api/v1/threads?limit=20&owner=${pick([...w.teammateIds.slice(0, 3), 'unassigned'], n)}`),
  },
  { name: 'features by score', first: (_w, c) => keyed(c.key, '/api/v1/features?limit=10') },
  {
    name: 'stories by status, expanded', next: cursorOf,
    first: (_w, c, n) => keyed(c.proofKey, `/api/v1/proof/items?limit=20&status=approved${pick(['', '&type=text'], n)}&expand=versions,consent`),
  },
  {
    name: 'ledger events by story', next: cursorOf,
    // Half the time one of the hundred hot stories, else any.
    first: (w, c, n) => keyed(c.proofKey, `/api/v1/proof/events?limit=20&proofItemId=${seedId('pit', w.tag, n % 2 === 0 ? n % 100 : (n * 7919) % w.size.stories)}`),
  },
  {
    name: 'ledger events by type', next: cursorOf,
    first: (_w, c, n) => keyed(c.proofKey, `/api/v1/proof/events?limit=20&eventType=${pick(['proof.item.rejected', 'proof.consent.revoked', 'proof.item.approved', 'proof.request.sent'], n)}`),
  },
  {
    name: "an end user's inbox", cursorParam: 'before', next: (body) => (body as { data: { nextCursor: string | null } }).data.nextCursor,
    first: (w, c, n) => asEndUser(c, activeEndUser(w, n), '/api/v1/inbox?limit=20'),
  },
  {
    name: 'room events after a seq',
    first: (w, c, n) => {
      const { room, seat } = roomOf(w, n);
      return asEndUser(c, roomSeat(room, seat, w.size.endUsers),
        `/api/v1/rooms/${seedId('room', w.tag, room)}/events?limit=50&after=${readMarkerOf(roomLength(w.size), seat)}`);
    },
  },
  {
    name: 'room catch-up',
    first: (w, c, n) => {
      const { room, seat } = roomOf(w, n);
      return asEndUser(c, roomSeat(room, seat, w.size.endUsers), `/api/v1/rooms/${seedId('room', w.tag, room)}/catch-up`);
    },
  },
  // A customer company's name (about 20 sources at any size) and a common topic (an eighth of them).
  { name: 'sources search, a company', next: cursorOf, first: (w, c, n) => keyed(c.key, `/api/v1/sources?limit=20&q=${companyOf(n * 13, w.size.sources)}`) },
  { name: 'sources search, a common word', next: cursorOf, first: (_w, c, n) => keyed(c.key, `/api/v1/sources?limit=20&q=${pick(TOPICS, n)}`) },
  {
    name: 'the delivery log', next: cursorOf,
    first: (w, c, n) => asTeammate(c, `/api/workspace/webhooks/deliveries?limit=10${pick(['', '&status=failed', `&endpointId=${w.endpointIds[1]}`], n)}`),
  },
];

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function get(base: string, r: Request): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(`${base}${r.path}`, { agent, headers: r.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/** Sequential requests of one read on one workspace; each walks its parameters and follows cursors for a few pages. */
class Walker {
  private n = 0;
  private cursor: string | null = null;
  private page = 0;
  readonly times: number[] = [];

  constructor(private readonly base: string, private readonly read: Read, private readonly w: ScaleWorkspace, private readonly c: Credentials) {}

  async run(count: number, record: boolean): Promise<void> {
    for (let k = 0; k < count; k++) {
      const first = this.read.first(this.w, this.c, this.n);
      const request = this.cursor
        ? { ...first, path: `${first.path}&${this.read.cursorParam ?? 'cursor'}=${this.cursor}` }
        : first;
      const start = performance.now();
      const res = await get(this.base, request);
      const ms = performance.now() - start;
      if (res.status !== 200) throw new Error(`${this.read.name} on the ${this.w.label} workspace: ${request.path} answered ${res.status} ${res.body.slice(0, 300)}`);
      if (record) this.times.push(ms);
      this.cursor = this.read.next && this.page + 1 < PAGES ? this.read.next(JSON.parse(res.body)) : null;
      this.page = this.cursor ? this.page + 1 : 0;
      if (!this.cursor) this.n++;
    }
  }
}

async function credentials(ds: Awaited<ReturnType<typeof openBenchDatabase>>, w: ScaleWorkspace): Promise<Credentials> {
  const key = async (scopes: string[]) => (await createServiceKey(ds, { organizationId: w.organizationId, productId: w.productId, environment: 'production',
    scopes })).secret;
  return {
    key: await key(['service:signals:read', 'service:threads:read', 'service:features:read', 'service:inbox:read', 'service:sources:read']),
    proofKey: await key(['service:proof:read']),
    session: await createSession(ds, w.teammateIds[0], 2),
    product: await ds.getRepository(Product).findOneByOrFail({ id: w.productId }),
  };
}

const ms = (v: number) => v.toFixed(1).padStart(6);

/**
 * Reads every table and index of the bench database into the operating system's page cache (pg_prewarm's `read`
 * mode), as a workspace in daily use would be. The small workspace's few pages are in memory anyway, while a
 * freshly seeded large one's are on disk, and this VM's host takes idle page cache back: without this, a read of
 * scattered rows (one light end user's signals: about twenty heap pages) timed the disk, not the query.
 */
async function prewarm(ds: Awaited<ReturnType<typeof openBenchDatabase>>): Promise<void> {
  const start = performance.now();
  await ds.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
  const [{ pages }]: Array<{ pages: string }> = await ds.query(
    `SELECT coalesce(sum(pg_prewarm(c.oid, 'read')), 0)::text AS pages FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i') AND c.relpersistence = 'p'`);
  console.log(`prewarmed ${(Number(pages) * 8 / 1024).toFixed(0)} MB into the page cache in ${((performance.now() - start) / 1000).toFixed(1)} s`);
}

async function main(): Promise<void> {
  installTemporalLogger('ERROR');
  const cleanup: Cleanup = [];
  try {
    const ds = await openBenchDatabase();
    cleanup.push(() => ds.destroy());
    const large = await findWorkspace(ds, 'large', LARGE_SIGNALS);
    const small = await findWorkspace(ds, 'small', Math.round(LARGE_SIGNALS / 1000));
    if (!large || !small) throw new Error(`the bench database has no seeded workspaces of ${LARGE_SIGNALS} and ${LARGE_SIGNALS / 1000} signals: run npm run bench:seed first`);
    const temporal = await startScratchTemporal(cleanup);
    const service = await startService(cleanup, {
      DATABASE_URL: BENCH_DATABASE_URL, TEMPORAL_ADDRESS: temporal.address, SV_SECRET_KEYS: BENCH_SECRET_KEYS, SV_TASK_QUEUE: 'bench-scale',
      // One client makes every request: the per-key and per-end-user limits would measure themselves.
      RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
    });
    const creds = new Map([[large, await credentials(ds, large)], [small, await credentials(ds, small)]]);
    if (PREWARM) await prewarm(ds);
    const walkers = READS.filter((read) => ONLY.test(read.name)).map((read) => ({
      read, small: new Walker(service.base, read, small, creds.get(small)!), large: new Walker(service.base, read, large, creds.get(large)!),
    }));
    console.log(`bench:scale  ${walkers.length} reads, ${REQUESTS} sequential requests a workspace, the two workspaces in turn, up to ${PAGES} pages a walk`);
    for (const w of walkers) {
      await w.small.run(WARM_UP, false);
      await w.large.run(WARM_UP, false);
    }
    // The two workspaces take turns request by request (which goes first alternates too), so a GC pause, a
    // checkpoint or a neighbour's burst falls on both alike rather than on whichever block it happened to hit.
    const perRound = Math.ceil(REQUESTS / ROUNDS);
    for (let round = 0; round < ROUNDS; round++) {
      for (const w of walkers) {
        for (let k = 0; k < perRound; k++) {
          const [first, second] = (round + k) % 2 === 0 ? [w.small, w.large] : [w.large, w.small];
          await first.run(1, true);
          await second.run(1, true);
        }
      }
      console.log(`round ${round + 1} of ${ROUNDS} done`);
    }
    console.log('');
    console.log(`| read | small p50 / p95 / p99 (ms) | large p50 / p95 / p99 (ms) | p99 large ÷ small | target ≤ ${TARGET}× |`);
    console.log('| --- | ---: | ---: | ---: | --- |');
    let failed = 0;
    for (const w of walkers) {
      const s = [...w.small.times].sort((a, b) => a - b);
      const l = [...w.large.times].sort((a, b) => a - b);
      const ratio = quantile(l, 0.99) / quantile(s, 0.99);
      if (ratio > TARGET) failed++;
      console.log(`| ${w.read.name} | ${ms(quantile(s, 0.5))} / ${ms(quantile(s, 0.95))} / ${ms(quantile(s, 0.99))} | ${ms(quantile(l, 0.5))} / ${ms(quantile(l, 0.95))} / ${ms(quantile(l, 0.99))} | ${ratio.toFixed(2)} | ${ratio > TARGET ? 'FAIL' : 'PASS'} |`);
    }
    console.log('');
    console.log(`bench:scale  ${walkers.length - failed} of ${walkers.length} reads within ${TARGET}× (large: ${LARGE_SIGNALS} signals; small: ${LARGE_SIGNALS / 1000})`);
  } finally {
    agent.destroy();
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:scale failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
