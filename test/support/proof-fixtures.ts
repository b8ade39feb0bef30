import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { Client as PgClient } from 'pg';
import { DataSource, DataSourceOptions, Logger } from 'typeorm';
import { createServiceKey } from '../../db/platform/service-keys';
import { Tenant, asTeammate, call, createTenant, withKey } from './fixtures';
import { ctx } from './root-hooks';

export const ALL_PROOF_SCOPES = [
  'service:proof:read', 'service:proof:read_private', 'service:proof:write', 'service:proof:submissions:write', 'service:proof:export',
];

export interface ProofTenant extends Tenant {
  /** Same product, proof:read only. */
  readKey: string;
}

export async function createProofTenant(): Promise<ProofTenant> {
  const tenant = await createTenant(ALL_PROOF_SCOPES);
  const read = await createServiceKey(ctx.dataSource, {
    organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production', scopes: ['service:proof:read'],
  });
  return { ...tenant, readKey: read.secret };
}

export function submissionBody(overrides: Record<string, unknown> = {}) {
  return {
    type: 'text',
    content: {
      text: 'We cut onboarding from 9 days to 2.', title: 'Faster onboarding', rating: 5,
      attribution: { name: 'Ada Lovelace', company: 'Analytical Ltd', title: 'CTO' },
    },
    customer: { personRef: 'cus_123', email: 'ada@example.com', name: 'Ada Lovelace' },
    consent: {
      displayMode: 'full_name', identityFields: ['name', 'company', 'title'], channels: ['website', 'in_app', 'email'],
      products: { all: true }, media: ['text'], paidUseAllowed: false, translationAllowed: true, geography: ['*'],
      validUntil: null, customerApprovedWording: true,
    },
    incentive: { offered: false },
    verification: { state: 'verified_customer' },
    ...overrides,
  };
}

export interface Submitted {
  submissionId: string;
  proofItemId: string;
  originalVersionId: string;
  consentGrantId: string;
  overLimit: boolean;
  overLimitReasons: string[];
}

export async function submit(tenant: Tenant, body: object = submissionBody(), app: FastifyInstance = ctx.app): Promise<Submitted> {
  const res = await call(withKey(tenant.key, {
    method: 'POST', url: '/api/v1/proof/submissions', payload: body, headers: { 'idempotency-key': `sub-${randomBytes(8).toString('hex')}` },
  }), app);
  if (res.statusCode !== 201) throw new Error(`submission failed: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

export async function requestApproval(tenant: Tenant, itemId: string, versionId: string, app: FastifyInstance = ctx.app) {
  return call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${itemId}/request-approval`, payload: { versionId } }), app);
}

export async function approve(tenant: Tenant, itemId: string, versionId: string, app: FastifyInstance = ctx.app) {
  return call(asTeammate(tenant.owner, { method: 'POST', url: `/api/workspace/proof/items/${itemId}/approve`, payload: { versionId } }), app);
}

/** Submits and approves the original: an item eligible on the consented channels. */
export async function approvedItem(tenant: Tenant, body: object = submissionBody()): Promise<Submitted> {
  const s = await submit(tenant, body);
  const requested = await requestApproval(tenant, s.proofItemId, s.originalVersionId);
  if (requested.statusCode !== 200) throw new Error(`request-approval failed: ${requested.body}`);
  const approved = await approve(tenant, s.proofItemId, s.originalVersionId);
  if (approved.statusCode !== 200) throw new Error(`approve failed: ${approved.body}`);
  return s;
}

export async function getItem(key: string, id: string, query = '', app: FastifyInstance = ctx.app) {
  return call(withKey(key, { method: 'GET', url: `/api/v1/proof/items/${id}${query}` }), app);
}

export async function ledgerTypes(itemId: string): Promise<string[]> {
  const rows: Array<{ event_type: string }> = await ctx.dataSource.query(
    `SELECT event_type FROM proof_events WHERE proof_item_id = $1 ORDER BY created_at, id`, [itemId]);
  return rows.map((r) => r.event_type);
}

export { eventually } from './fixtures';

/** A statement on a connection of its own, outside TypeORM, so an expected refusal is not logged as a failure. */
export async function rawQuery(sql: string, params: unknown[] = []): Promise<unknown> {
  const client = new PgClient({ connectionString: ctx.databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

export interface PlacementTenant extends ProofTenant {
  /** Same product: read, write and publish. */
  publishKey: string;
}

export async function createPlacementTenant(): Promise<PlacementTenant> {
  const tenant = await createProofTenant();
  const publish = await createServiceKey(ctx.dataSource, {
    organizationId: tenant.organizationId, productId: tenant.product.id, environment: 'production',
    scopes: ['service:proof:read', 'service:proof:write', 'service:proof:publish'],
  });
  return { ...tenant, publishKey: publish.secret };
}

export async function createPlacement(tenant: PlacementTenant, body: object = {}): Promise<{ id: string; [k: string]: unknown }> {
  const res = await call(withKey(tenant.publishKey, {
    method: 'POST', url: '/api/v1/proof/placements', payload: { name: 'Home wall', placementType: 'wall', channel: 'website', ...body },
  }));
  if (res.statusCode !== 201) throw new Error(`placement failed: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

export async function place(tenant: PlacementTenant, placementId: string, body: object) {
  return call(withKey(tenant.publishKey, { method: 'POST', url: `/api/v1/proof/placements/${placementId}/items`, payload: body }));
}

export async function publish(tenant: PlacementTenant, placementId: string, query = '') {
  return call(withKey(tenant.publishKey, { method: 'POST', url: `/api/v1/proof/placements/${placementId}/publish${query}` }));
}

/** An active placement on `channel` showing the given items, in order. */
export async function publishedPlacement(tenant: PlacementTenant, itemIds: string[], body: object = {}): Promise<string> {
  const placement = await createPlacement(tenant, body);
  for (const proofItemId of itemIds) {
    const res = await place(tenant, placement.id, { proofItemId });
    if (res.statusCode !== 201) throw new Error(`place failed: ${res.body}`);
  }
  const res = await publish(tenant, placement.id);
  if (res.statusCode !== 200) throw new Error(`publish failed: ${res.body}`);
  return placement.id;
}

/** A second DataSource on the test database that records every statement it runs, for query-count tests. */
export async function countingDataSource(): Promise<{ ds: DataSource; statements: string[] }> {
  const statements: string[] = [];
  const noop = () => undefined;
  const logger: Logger = {
    logQuery: (query) => {
      statements.push(query);
    },
    logQueryError: noop, logQuerySlow: noop, logSchemaBuild: noop, logMigration: noop, log: noop,
  };
  const ds = new DataSource({ ...ctx.dataSource.options, migrations: [], logging: ['query'], logger } as DataSourceOptions);
  await ds.initialize();
  return { ds, statements };
}
