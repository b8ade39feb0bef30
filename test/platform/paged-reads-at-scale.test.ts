import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance, InjectOptions } from 'fastify';
import { DataSource, DataSourceOptions, Logger } from 'typeorm';
import { buildApp } from '../../api/app';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { SeedSize, companyOf, readMarkerOf, roomLength, roomSeat, scaled, seedId, seedWorkspace } from '../../bench/scale-seed';
import { createServiceKey } from '../../db/platform/service-keys';
import { Tenant, asTeammate, createTenant, endUserToken, sessionFor, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** A table is large from this many rows on; the seeded ones hold 10,000 to 100,000. */
const LARGE = 5_000;
/** A page is at most 100 rows; a plan that reads or sorts this many more than it answers does work that grows with the data. */
const WASTE = 1_000;

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

/** What in a plan grows with the workspace: a sequential scan of a large table, rows read only to be filtered away, a sort of many rows. */
function growingWork(plan: PlanNode, sizes: Map<string, number>): string[] {
  const found: string[] = [];
  for (const node of nodes(plan)) {
    const table = node['Relation Name'];
    const loops = node['Actual Loops'] ?? 1;
    if (node['Node Type'] === 'Seq Scan' && table && (sizes.get(table) ?? 0) >= LARGE) found.push(`Seq Scan on ${table}`);
    const removed = ((node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * loops;
    if (removed > WASTE) found.push(`${node['Node Type']} on ${table ?? '?'} (${node['Index Name'] ?? 'no index'}) reads ${removed} rows it filters away`);
    if (node['Node Type'] === 'Sort') {
      const input = (node.Plans?.[0]?.['Actual Rows'] ?? 0) * (node.Plans?.[0]?.['Actual Loops'] ?? 1);
      if (input > WASTE) found.push(`Sort of ${input} rows`);
    }
  }
  return found;
}

describe('paged reads at scale: no read a user makes grows with the workspace (EXPLAIN over 100,000 signals)', function () {
  this.timeout(600_000);
  let statements: Array<{ sql: string; parameters: unknown[] }> = [];
  let ds: DataSource;
  let app: FastifyInstance;
  let tenant: Tenant;
  let endpointIds: string[];
  let sizes: Map<string, number>;
  let tag: string;
  let proofKey: string;
  let memberId: string;
  const size: SeedSize = scaled(100_000);

  before(async () => {
    tenant = await createTenant(['service:signals:read', 'service:threads:read', 'service:features:read', 'service:inbox:read', 'service:sources:read']);
    proofKey = (await createServiceKey(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production', scopes: ['service:proof:read'],
    })).secret;
    endpointIds = [];
    for (const n of [0, 1]) {
      endpointIds.push((await createEndpoint(ctx.dataSource, tenant.organizationId, { url: `https://receiver-${n}.example.com/in`, subscriptions: ['signal.created'] })).endpoint.id);
    }
    memberId = (await sessionFor(tenant.organizationId, 'member')).id;
    await seedWorkspace(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: tenant.product.id, teammateIds: [tenant.owner.id, memberId], endpointIds,
      tag: (tag = `t${randomBytes(3).toString('hex').slice(0, 5)}`),
    }, size);
    const rows: Array<{ relname: string; n: number }> = await ctx.dataSource.query(
      `SELECT relname, reltuples::bigint AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`);
    sizes = new Map(rows.map((r) => [r.relname, Number(r.n)]));
    const noop = () => undefined;
    const logger: Logger = {
      logQuery: (sql, parameters) => {
        statements.push({ sql, parameters: parameters ?? [] });
      },
      logQueryError: noop, logQuerySlow: noop, logSchemaBuild: noop, logMigration: noop, log: noop,
    };
    ds = new DataSource({ ...ctx.dataSource.options, migrations: [], logging: ['query'], logger } as DataSourceOptions);
    await ds.initialize();
    app = await buildApp({ dataSource: ds, temporal: ctx.temporal, config: ctx.config });
  });

  after(async () => {
    await app?.close();
    await ds?.destroy();
  });

  const key = (url: string): InjectOptions => withKey(tenant.key, { method: 'GET', url });
  const proof = (url: string): InjectOptions => withKey(proofKey, { method: 'GET', url });
  const endUser = (endUserId: string, url: string): InjectOptions => ({
    method: 'GET', url, headers: { authorization: `Bearer ${endUserToken(tenant.product, { sub: endUserId })}` },
  });
  const room = (r: number) => seedId('room', tag, r);
  const reads: Array<[string, () => InjectOptions]> = [
    ['signals, newest first', () => key('/api/v1/signals?limit=50')],
    ['signals by category', () => key('/api/v1/signals?limit=50&category=review')],
    ['signals since', () => key(`/api/v1/signals?limit=50&since=${encodeURIComponent(new Date(Date.now() - 30 * 86_400_000).toISOString())}`)],
    ["one end user's signals", () => key('/api/v1/signals?limit=50&endUserId=user-42')],
    ["a heavy end user's signals (a tenth of all)", () => key('/api/v1/signals?limit=50&endUserId=user-0')],
    ['threads open', () => key('/api/v1/threads?limit=50&state=open')],
    ['threads by owner', () => key(`/api/v1/threads?limit=50&owner=${tenant.owner.id}`)],
    ['threads by another teammate', () => key(`/api/v1/threads?limit=50&owner=${memberId}`)],
    ['threads unassigned', () => key('/api/v1/threads?limit=50&owner=unassigned')],
    ['features by score', () => key('/api/v1/features?limit=50')],
    ['features planned', () => key('/api/v1/features?limit=50&state=planned')],
    ['stories in review with expand', () => proof('/api/v1/proof/items?limit=50&status=in_review&expand=versions,consent')],
    ['stories approved with expand', () => proof('/api/v1/proof/items?limit=50&status=approved&expand=versions,consent')],
    ['ledger events by type', () => proof('/api/v1/proof/events?limit=50&eventType=proof.consent.revoked')],
    ['ledger events by item', () => proof(`/api/v1/proof/events?limit=50&proofItemId=${seedId('pit', tag, 7)}`)],
    ['ledger events of a hot item', () => proof(`/api/v1/proof/events?limit=50&proofItemId=${seedId('pit', tag, 0)}`)],
    ["one end user's inbox", () => key('/api/v1/inbox?limit=50&endUserId=user-42')],
    ["a heavy end user's inbox, as the end user", () => endUser('user-0', '/api/v1/inbox?limit=50')],
    ['room events after a read marker', () => endUser(roomSeat(4, 3, size.endUsers),
      `/api/v1/rooms/${room(4)}/events?limit=50&after=${readMarkerOf(roomLength(size), 3)}`)],
    ['room catch-up', () => endUser(roomSeat(6, 0, size.endUsers), `/api/v1/rooms/${room(6)}/catch-up`)],
    ['sources search, a customer company (few sources)', () => key(`/api/v1/sources?limit=50&q=${companyOf(3, size.sources)}`)],
    // A word in four sources of ten; one in a few percent is read through the trigram index and its matches sorted,
    // which grows with the workspace (docs/performance.md, "Not done").
    ['sources search, a common word', () => key('/api/v1/sources?limit=50&q=reporting')],
    ['sources, newest first', () => key('/api/v1/sources?limit=50')],
    ['the delivery log', () => asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/webhooks/deliveries?limit=50' })],
    ['failed deliveries', () => asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/webhooks/deliveries?limit=50&status=failed' })],
    ["one endpoint's deliveries", () => asTeammate(tenant.owner, { method: 'GET', url: `/api/workspace/webhooks/deliveries?limit=50&endpointId=${endpointIds[1]}` })],
  ];

  for (const [name, request] of reads) {
    it(name, async () => {
      statements = [];
      const res = await app.inject(request());
      assert.equal(res.statusCode, 200, res.body);
      const selects = statements.filter((s) => /^\s*SELECT/i.test(s.sql) && !/pg_advisory|set_config/i.test(s.sql));
      assert.ok(selects.length > 0, 'the read ran a query');
      const problems: string[] = [];
      for (const s of selects) {
        const [{ 'QUERY PLAN': [explained] }] = await ctx.dataSource.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${s.sql}`, s.parameters);
        const found = growingWork(explained.Plan as PlanNode, sizes);
        if (found.length > 0) problems.push(`${found.join('; ')}\n    in: ${s.sql.replace(/\s+/g, ' ').slice(0, 400)}`);
      }
      if (problems.length > 0) assert.fail(problems.join('\n'));
    });
  }
});
