import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../rules/ids';
import { DealFormat, DealStatus, normaliseDeals } from '../rules/crm-deals';
import type { ProductTenant } from '../platform/product-tenant';
import { validationFailed } from '../../runtime/service-error';
import { recordSource } from './sources';
import { databaseNow } from '../clock';

type DealOutcome = 'created' | 'updated' | 'unchanged' | 'stale';

// Every stored field the push sets; an upsert changes a deal only when one of them differs.
const FIELDS = ['name', 'stage', 'status', 'amount', 'currency', 'close_date', 'account_name', 'account_domain', 'contacts', 'proof_item_ids',
  'external_updated_at'];
const list = (prefix: string) => FIELDS.map((f) => `${prefix}${f}`).join(', ');

/** One deal of a push: its status as stored after the push (a stale entry leaves the stored one) and what the push did. */
interface Settled { dealId: string; status: DealStatus; outcome: DealOutcome }

/**
 * Writes one round of deals with distinct external ids in two statements: an upsert that inserts the
 * new ones and updates those that are neither stale (older by their CRM's update time than the stored
 * one) nor the same, then a read of the rest (locked by the upsert) to tell stale from unchanged.
 */
async function upsertRound(em: EntityManager, tenant: ProductTenant, format: DealFormat, rows: Array<Record<string, unknown>>) {
  const written: Array<{ id: string; external_id: string; status: DealStatus }> = await em.query(
    `INSERT INTO proof_crm_deals AS d (id, organization_id, product_id, format, external_id, ${list('')})
     SELECT id, $1, $2, $3, external_id, ${list('')}
       FROM jsonb_to_recordset($4::jsonb) AS x(id text, external_id text, name text, stage text, status text, amount numeric, currency text,
              close_date date, account_name text, account_domain text, contacts jsonb, proof_item_ids text[], external_updated_at timestamptz)
     ON CONFLICT (product_id, format, external_id) DO UPDATE SET ${FIELDS.map((f) => `${f} = EXCLUDED.${f}`).join(', ')}, updated_at = now()
      WHERE NOT coalesce(EXCLUDED.external_updated_at < d.external_updated_at, false)
        AND (${list('d.')}) IS DISTINCT FROM (${list('EXCLUDED.')})
     RETURNING d.id, d.external_id, d.status`,
    [tenant.organizationId, tenant.productId, format, JSON.stringify(rows)],
  );
  const outcomes = new Map<string, Settled>();
  const generated = new Map(rows.map((r) => [r.external_id as string, r.id as string]));
  for (const w of written) outcomes.set(w.external_id, { dealId: w.id, status: w.status,
    outcome: generated.get(w.external_id) === w.id ? 'created' : 'updated' });
  const rest = rows.filter((r) => !outcomes.has(r.external_id as string));
  if (rest.length > 0) {
    const kept: Array<{ id: string; external_id: string; status: DealStatus; stale: boolean }> = await em.query(
      `SELECT d.id, d.external_id, d.status, coalesce(x.external_updated_at < d.external_updated_at, false) AS stale
         FROM jsonb_to_recordset($3::jsonb) AS x(external_id text, external_updated_at timestamptz)
         JOIN proof_crm_deals d ON d.product_id = $1 AND d.format = $2 AND d.external_id = x.external_id`,
      [tenant.productId, format, JSON.stringify(rest.map((r) => ({ external_id: r.external_id, external_updated_at: r.external_updated_at })))],
    );
    for (const k of kept) outcomes.set(k.external_id, { dealId: k.id, status: k.status, outcome: k.stale ? 'stale' : 'unchanged' });
  }
  return outcomes;
}

/**
 * Upserts deals per (product, format, external id). A deal older than the stored one (by its CRM's
 * update time) is skipped as stale; the same content is unchanged. Only known proof items are kept.
 * A push that names one external id twice is written in rounds, so the later entry meets the earlier.
 */
export async function pushDeals(ds: DataSource, tenant: ProductTenant, format: DealFormat, raw: unknown[], keyId: string) {
  const { deals, issues } = normaliseDeals(format, raw);
  if (issues.length > 0) throw validationFailed(issues);
  return ds.transaction(async (em) => {
    const named = [...new Set(deals.flatMap((d) => d.proofItemIds))];
    const known = new Set<string>(named.length === 0 ? [] : (await em.query(
      `SELECT id FROM proof_items WHERE product_id = $1 AND id = ANY($2)`, [tenant.productId, named])).map((r: { id: string }) => r.id));
    const rounds: Array<Array<{ index: number; row: Record<string, unknown> }>> = [];
    const occurrences = new Map<string, number>();
    deals.forEach((deal, index) => {
      const round = occurrences.get(deal.externalId) ?? 0;
      occurrences.set(deal.externalId, round + 1);
      (rounds[round] ??= []).push({
        index,
        row: {
          id: newId('deal'), external_id: deal.externalId, name: deal.name, stage: deal.stage, status: deal.status, amount: deal.amount,
          currency: deal.currency, close_date: deal.closeDate, account_name: deal.accountName, account_domain: deal.accountDomain,
          contacts: deal.contacts, proof_item_ids: deal.proofItemIds.filter((id) => known.has(id)), external_updated_at: deal.updatedAt,
        },
      });
    });
    const settled: Settled[] = [];
    for (const round of rounds) {
      const outcomes = await upsertRound(em, tenant, format, round.map((r) => r.row));
      for (const { index, row } of round) settled[index] = outcomes.get(row.external_id as string)!;
    }
    const counts = { received: deals.length, created: 0, updated: 0, unchanged: 0, stale: 0 };
    const results: Array<{ externalId: string; dealId: string; status: DealStatus; outcome: DealOutcome; unknownProofItemIds: string[] }> = [];
    for (const [index, deal] of deals.entries()) {
      const { dealId, status, outcome } = settled[index];
      counts[outcome] += 1;
      if (outcome === 'created' || outcome === 'updated') {
        await recordSource(em, {
          organizationId: tenant.organizationId, productId: tenant.productId, system: 'crm', externalId: `${format}:${deal.externalId}`,
          kind: 'deal', capturedAt: deal.updatedAt ?? await databaseNow(em), title: deal.name, links: { dealId }, reuse: 'internal_only',
          reasons: ['no_consent'], actor: { type: 'service_key', id: keyId }, ref: dealId,
        });
      }
      results.push({ externalId: deal.externalId, dealId, status, outcome, unknownProofItemIds: deal.proofItemIds.filter((i) => !known.has(i)) });
    }
    return { ...counts, deals: results };
  });
}

export interface InfluenceFilter {
  since?: string;
  until?: string;
  status?: string;
  proofItemId?: string;
}

type Tally = { deals: { open: number; won: number; lost: number }; won: Map<string, number>; dealIds: string[] };
const tally = (): Tally => ({ deals: { open: 0, won: 0, lost: 0 }, won: new Map(), dealIds: [] });
const amounts = (won: Map<string, number>) => [...won.entries()].map(([currency, amount]) => ({ currency, amount }));

/** Deals touched by each approved, unrevoked proof item they name; a revoked item leaves the report. */
export async function influenceReport(ds: DataSource, productId: string, filter: InfluenceFilter) {
  const rows: Array<{ item_id: string; id: string; status: 'open' | 'won' | 'lost'; amount: string | null; currency: string | null }> = await ds.query(
    `SELECT x.item_id, d.id, d.status, d.amount, d.currency
       FROM proof_crm_deals d CROSS JOIN LATERAL unnest(d.proof_item_ids) AS x(item_id)
       JOIN proof_items i ON i.id = x.item_id AND i.product_id = d.product_id AND i.status = 'approved' AND i.revoked_at IS NULL
      WHERE d.product_id = $1
        AND ($2::date IS NULL OR d.close_date >= $2::date) AND ($3::date IS NULL OR d.close_date <= $3::date)
        AND ($4::text IS NULL OR d.status = $4) AND ($5::text IS NULL OR x.item_id = $5)
      ORDER BY x.item_id, d.created_at, d.id`,
    [productId, filter.since ?? null, filter.until ?? null, filter.status ?? null, filter.proofItemId ?? null],
  );
  const perItem = new Map<string, Tally>();
  const total = tally();
  const seen = new Set<string>();
  for (const row of rows) {
    const t = perItem.get(row.item_id) ?? tally();
    perItem.set(row.item_id, t);
    const add = (into: Tally) => {
      into.deals[row.status] += 1;
      if (row.status === 'won' && row.amount !== null) {
        const currency = row.currency ?? 'XXX';
        into.won.set(currency, (into.won.get(currency) ?? 0) + Number(row.amount));
      }
    };
    add(t);
    if (t.dealIds.length < 50) t.dealIds.push(row.id);
    if (!seen.has(row.id)) {
      seen.add(row.id);
      add(total);
    }
  }
  return {
    items: [...perItem.entries()].map(([proofItemId, t]) => ({ proofItemId, deals: t.deals, wonAmount: amounts(t.won), dealIds: t.dealIds })),
    totals: { items: perItem.size, deals: total.deals, wonAmount: amounts(total.won) },
  };
}
