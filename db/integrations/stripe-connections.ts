import { DataSource } from 'typeorm';
import { ProofStripeConnection } from '../entities';
import { Page, PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { sha256Hex } from '../rules/secrets';
import { StripeEvent, invoiceMilestone, mapStripeEvent, stripeCustomer } from '../rules/stripe-events';
import { valueEventIssues } from '../rules/value-events';
import { ScoringSettings, recordValueEventIn } from './value-events';
import { assertOwnProduct } from '../collection/scope';
import { HOOK_TOKEN_PATTERN, issueUrlToken } from './hooks';
import { conflict, notFound } from '../../runtime/service-error';
import { openSecret } from '../../runtime/secret-box';

export const DEFAULT_INVOICE_MILESTONES = [3, 6, 12, 24];

/** The signing secret never leaves the service: only whether one is set. */
export function viewConnection(row: ProofStripeConnection) {
  return {
    id: row.id,
    productId: row.productId,
    name: row.name,
    state: row.state,
    hasSigningSecret: row.signingSecret !== null,
    invoiceMilestones: row.invoiceMilestones,
    createdAt: row.createdAt.toISOString(),
    lastEventAt: row.lastEventAt ? row.lastEventAt.toISOString() : null,
  };
}

export async function createConnection(
  ds: DataSource, organizationId: string, input: { productId: string; name: string; signingSecret?: string },
) {
  await assertOwnProduct(ds, organizationId, input.productId);
  const { token, digest, prefix } = issueUrlToken();
  const repo = ds.getRepository(ProofStripeConnection);
  const row = await repo.save(repo.create({
    id: newId('stc'), organizationId, productId: input.productId, name: input.name, state: 'active', tokenDigest: digest,
    tokenPrefix: prefix, signingSecret: input.signingSecret ?? null, invoiceMilestones: DEFAULT_INVOICE_MILESTONES, lastEventAt: null,
  }));
  return { connection: viewConnection(row), token };
}

export async function listConnections(ds: DataSource, organizationId: string, page: PageRequest): Promise<Page<ReturnType<typeof viewConnection>>> {
  const qb = ds.getRepository(ProofStripeConnection).createQueryBuilder('c').where('c.organization_id = :organizationId', { organizationId });
  return pageOf(qb, 'c', page, viewConnection);
}

async function ownConnection(ds: DataSource, organizationId: string, id: string): Promise<ProofStripeConnection> {
  const row = await ds.getRepository(ProofStripeConnection).findOneBy({ id, organizationId });
  if (!row) throw notFound('connection');
  return row;
}

export interface ConnectionChange {
  name?: string;
  signingSecret?: string;
  state?: 'active' | 'disabled';
  invoiceMilestones?: number[];
}

export async function updateConnection(ds: DataSource, organizationId: string, id: string, change: ConnectionChange) {
  const row = await ownConnection(ds, organizationId, id);
  if (change.name !== undefined) row.name = change.name;
  if (change.signingSecret !== undefined) row.signingSecret = change.signingSecret;
  if (change.state !== undefined) row.state = change.state;
  if (change.invoiceMilestones !== undefined) row.invoiceMilestones = [...new Set(change.invoiceMilestones)].sort((a, b) => a - b);
  return viewConnection(await ds.getRepository(ProofStripeConnection).save(row));
}

export async function rotateConnection(ds: DataSource, organizationId: string, id: string) {
  const row = await ownConnection(ds, organizationId, id);
  if (row.state !== 'active') throw conflict('a disabled connection cannot be rotated');
  const { token, digest, prefix } = issueUrlToken();
  row.tokenDigest = digest;
  row.tokenPrefix = prefix;
  return { connection: viewConnection(await ds.getRepository(ProofStripeConnection).save(row)), token };
}

export interface ResolvedConnection {
  id: string;
  organizationId: string;
  productId: string;
  signingSecret: string | null;
  invoiceMilestones: number[];
}

/** The active connection of an active product a URL token names; null for every other token. */
export async function resolveConnectionToken(ds: DataSource, token: string): Promise<ResolvedConnection | null> {
  if (!HOOK_TOKEN_PATTERN.test(token)) return null;
  const [row] = await ds.query(
    `SELECT c.id, c.organization_id, c.product_id, c.signing_secret, c.invoice_milestones
       FROM proof_stripe_connections c JOIN products p ON p.id = c.product_id
      WHERE c.token_digest = $1 AND c.state = 'active' AND p.active`,
    [sha256Hex(token)],
  );
  if (!row) return null;
  return {
    id: row.id, organizationId: row.organization_id, productId: row.product_id,
    signingSecret: row.signing_secret === null ? null : openSecret(row.signing_secret),
    invoiceMilestones: row.invoice_milestones,
  };
}

export interface ProcessorReceipt {
  received: true;
  duplicate: boolean;
  processorEventId: string;
  valueEventId: string | null;
}

/**
 * Stores a verified processor event once per connection and maps it to at most one value event in
 * the same transaction; a repeat answers the first mapping and maps nothing again.
 */
export async function receiveStripeEvent(
  ds: DataSource, connection: ResolvedConnection, event: StripeEvent, settings: ScoringSettings,
): Promise<ProcessorReceipt> {
  return ds.transaction(async (em) => {
    const inserted: unknown[] = await em.query(
      `INSERT INTO proof_processor_events (connection_id, processor_event_id, type) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING processor_event_id`,
      [connection.id, event.id, event.type],
    );
    if (inserted.length === 0) {
      const [first] = await em.query(
        `SELECT value_event_id FROM proof_processor_events WHERE connection_id = $1 AND processor_event_id = $2`, [connection.id, event.id]);
      return { received: true, duplicate: true, processorEventId: event.id, valueEventId: first.value_event_id };
    }
    await em.query(`UPDATE proof_stripe_connections SET last_event_at = now() WHERE id = $1`, [connection.id]);
    let input = mapStripeEvent(event);
    const customer = stripeCustomer(event);
    if (event.type === 'invoice.paid' && typeof event.data.object.amount_paid === 'number' && event.data.object.amount_paid > 0
      && customer && typeof event.data.object.id === 'string') {
      await em.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`paid-invoices:${connection.id}:${customer}`]);
      const added: unknown[] = await em.query(
        `INSERT INTO proof_paid_invoices (connection_id, customer, invoice_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING invoice_id`,
        [connection.id, customer, event.data.object.id],
      );
      if (added.length > 0) {
        const [{ n }] = await em.query(
          `SELECT count(*)::int AS n FROM proof_paid_invoices WHERE connection_id = $1 AND customer = $2`, [connection.id, customer]);
        if (connection.invoiceMilestones.includes(n)) input = invoiceMilestone(event, n);
      }
    }
    // A processor payload that cannot make a valid value event is stored and mapped to nothing.
    if (!input || valueEventIssues(input, Date.now()).length > 0) {
      return { received: true, duplicate: false, processorEventId: event.id, valueEventId: null };
    }
    const { event: recorded } = await recordValueEventIn(
      em, { organizationId: connection.organizationId, productId: connection.productId }, input, { type: 'payment', id: connection.id }, settings,
    );
    await em.query(
      `UPDATE proof_processor_events SET value_event_id = $3 WHERE connection_id = $1 AND processor_event_id = $2`,
      [connection.id, event.id, recorded.id],
    );
    return { received: true, duplicate: false, processorEventId: event.id, valueEventId: recorded.id };
  });
}
