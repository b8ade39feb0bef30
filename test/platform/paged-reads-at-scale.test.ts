import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance, InjectOptions } from 'fastify';
import { DataSource, DataSourceOptions, Logger } from 'typeorm';
import { buildApp } from '../../api/app';
import { createEndpoint } from '../../db/webhooks/webhook-endpoints';
import { scaled, seedWorkspace } from '../../bench/scale-seed';
import { createServiceKey } from '../../db/platform/service-keys';
import { Tenant, asTeammate, createTenant, withKey } from '../support/fixtures';
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

describe('paged reads at scale: no read a user makes grows with the workspace (EXPLAIN over 100,000 rows)', function () {
  this.timeout(600_000);
  let statements: Array<{ sql: string; parameters: unknown[] }> = [];
  let ds: DataSource;
  let app: FastifyInstance;
  let tenant: Tenant;
  let endpointId: string;
  let sizes: Map<string, number>;
  let prefix: string;
  let proofKey: string;

  before(async () => {
    tenant = await createTenant(['service:signals:read', 'service:threads:read', 'service:features:read', 'service:inbox:read']);
    proofKey = (await createServiceKey(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production', scopes: ['service:proof:read'],
    })).secret;
    endpointId = (await createEndpoint(ctx.dataSource, tenant.organizationId,
      { url: 'https://receiver.example.com/in', subscriptions: ['signal.created'] })).endpoint.id;
    await seedWorkspace(ctx.dataSource, {
      organizationId: tenant.organizationId, productId: tenant.product.id, ownerId: tenant.owner.id, endpointId,
      prefix: (prefix = `s${randomBytes(3).toString('hex')}_`),
    }, scaled(100_000));
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
  const reads: Array<[string, () => InjectOptions]> = [
    ['signals, newest first', () => key('/api/v1/signals?limit=50')],
    ['signals by category', () => key('/api/v1/signals?limit=50&category=review')],
    ['signals since', () => key(`/api/v1/signals?limit=50&since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`)],
    ["one end user's signals", () => key('/api/v1/signals?limit=50&endUserId=user-42')],
    ['threads open', () => key('/api/v1/threads?limit=50&state=open')],
    ['threads by owner', () => key(`/api/v1/threads?limit=50&owner=${tenant.owner.id}`)],
    ['threads unassigned', () => key('/api/v1/threads?limit=50&owner=unassigned')],
    ['features by score', () => key('/api/v1/features?limit=50')],
    ['features planned', () => key('/api/v1/features?limit=50&state=planned')],
    ['stories in review with expand', () => proof('/api/v1/proof/items?limit=50&status=in_review&expand=versions,consent')],
    ['ledger events by type', () => proof('/api/v1/proof/events?limit=50&eventType=proof.item.revoked')],
    ['ledger events by item', () => proof(`/api/v1/proof/events?limit=50&proofItemId=${prefix}pit_7`)],
    ["one end user's inbox", () => key('/api/v1/inbox?limit=50&endUserId=user-42')],
    ['the delivery log', () => asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/webhooks/deliveries?limit=50' })],
    ['failed deliveries', () => asTeammate(tenant.owner, { method: 'GET', url: '/api/workspace/webhooks/deliveries?limit=50&status=failed' })],
    ['one endpoint\'s deliveries', () => asTeammate(tenant.owner, { method: 'GET',
      url: `/api/workspace/webhooks/deliveries?limit=50&endpointId=${endpointId}` })],
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
