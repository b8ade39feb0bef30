import { DataSource } from 'typeorm';
import { newId } from '../rules/ids';
import { DealFormat, normaliseDeals } from '../rules/crm-deals';
import type { ProductTenant } from '../customer-loop/signals';
import { validationFailed } from '../../runtime/service-error';
import { recordSource } from './sources';

const COMPARED = ['name', 'stage', 'status', 'amount', 'currency', 'close_date', 'account_name', 'account_domain', 'contacts', 'proof_item_ids', 'external_updated_at'];

/**
 * Upserts deals per (product, format, external id). A deal older than the stored one (by its CRM's
 * update time) is skipped as stale; the same content is unchanged. Only known proof items are kept.
 */
export async function pushDeals(ds: DataSource, tenant: ProductTenant, format: DealFormat, raw: unknown[], keyId: string) {
  const { deals, issues } = normaliseDeals(format, raw);
  if (issues.length > 0) throw validationFailed(issues);
  return ds.transaction(async (em) => {
    const named = [...new Set(deals.flatMap((d) => d.proofItemIds))];
    const known = new Set<string>(named.length === 0 ? [] : (await em.query(
      `SELECT id FROM proof_items WHERE product_id = $1 AND id = ANY($2)`, [tenant.productId, named])).map((r: { id: string }) => r.id));
    const counts = { received: deals.length, created: 0, updated: 0, unchanged: 0, stale: 0 };
    const results: Array<{ externalId: string; dealId: string; status: string; unknownProofItemIds: string[] }> = [];
    for (const deal of deals) {
      const itemIds = deal.proofItemIds.filter((id) => known.has(id));
      const values = [deal.name, deal.stage, deal.status, deal.amount, deal.currency, deal.closeDate, deal.accountName, deal.accountDomain,
        JSON.stringify(deal.contacts), itemIds, deal.updatedAt];
      const id = newId('deal');
      const [created] = await em.query(
        `INSERT INTO proof_crm_deals (id, organization_id, product_id, format, external_id, name, stage, status, amount, currency, close_date,
           account_name, account_domain, contacts, proof_item_ids, external_updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
         ON CONFLICT (product_id, format, external_id) DO NOTHING RETURNING id`,
        [id, tenant.organizationId, tenant.productId, format, deal.externalId, ...values],
      );
      let outcome: 'created' | 'updated' | 'unchanged' | 'stale';
      let dealId: string;
      if (created) {
        outcome = 'created';
        dealId = id;
      } else {
        const [stored] = await em.query(
          `SELECT id, ${COMPARED.join(', ')} FROM proof_crm_deals WHERE product_id = $1 AND format = $2 AND external_id = $3 FOR UPDATE`,
          [tenant.productId, format, deal.externalId],
        );
        dealId = stored.id;
        const [same] = await em.query(
          `SELECT ($1::text IS NOT DISTINCT FROM $12::text AND $2::text IS NOT DISTINCT FROM $13::text AND $3::text = $14::text
             AND $4::numeric IS NOT DISTINCT FROM $15::numeric AND $5::text IS NOT DISTINCT FROM $16::text AND $6::date IS NOT DISTINCT FROM $17::date
             AND $7::text IS NOT DISTINCT FROM $18::text AND $8::text IS NOT DISTINCT FROM $19::text AND $9::jsonb = $20::jsonb
             AND $10::text[] = $21::text[] AND $11::timestamptz IS NOT DISTINCT FROM $22::timestamptz) AS same`,
          [...values, ...COMPARED.map((c) => (c === 'contacts' ? JSON.stringify(stored[c]) : stored[c]))],
        );
        if (deal.updatedAt && stored.external_updated_at && deal.updatedAt < stored.external_updated_at) outcome = 'stale';
        else if (same.same) outcome = 'unchanged';
        else {
          await em.query(
            `UPDATE proof_crm_deals SET name = $2, stage = $3, status = $4, amount = $5, currency = $6, close_date = $7, account_name = $8,
               account_domain = $9, contacts = $10, proof_item_ids = $11, external_updated_at = $12, updated_at = now() WHERE id = $1`,
            [dealId, ...values],
          );
          outcome = 'updated';
        }
      }
      counts[outcome] += 1;
      if (outcome === 'created' || outcome === 'updated') {
        await recordSource(em, {
          organizationId: tenant.organizationId, productId: tenant.productId, system: 'crm', externalId: `${format}:${deal.externalId}`,
          kind: 'deal', capturedAt: deal.updatedAt ?? new Date(), title: deal.name, links: { dealId }, reuse: 'internal_only',
          reasons: ['no_consent'], actor: { type: 'service_key', id: keyId }, ref: dealId,
        });
      }
      results.push({ externalId: deal.externalId, dealId, status: outcome, unknownProofItemIds: deal.proofItemIds.filter((i) => !known.has(i)) });
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
