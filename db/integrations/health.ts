import { DataSource } from 'typeorm';
import { ProofHealthFinding } from '../entities';
import { Page, PageRequest, pageOf } from '../pagination';
import { SYSTEM_ACTOR, appendProofEvent } from '../proof/proof-ledger';
import { publishPlacement } from '../proof/proof-placements';
import { newId } from '../rules/ids';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { proofHealthWorkflowId } from '../../workflows/workflow-ids';

export const HEALTH_CHECKS = ['consent_expiring', 'placement_excluded_items', 'stream_failed'] as const;
export type HealthCheck = (typeof HEALTH_CHECKS)[number];

interface Finding {
  check: HealthCheck;
  subjectId: string;
  proofItemId: string | null;
  placementId: string | null;
  properties: Record<string, unknown>;
}

/**
 * Asks `proof-health/<productId>` to run its checks now (starting it when it is not running), through the
 * workflow_commands outbox: a Temporal outage delays the run, never drops it. Answers the workflow id.
 */
export async function requestHealthRun(ds: DataSource, tenant: { organizationId: string; productId: string }, intervalMs: number): Promise<string> {
  await enqueueWorkflowCommand(ds.manager, { type: 'proof.health.run', tenant, intervalMs });
  return proofHealthWorkflowId(tenant.productId);
}

/**
 * Records a finding: the first sighting of a (check, subject) on a UTC day writes the ledger entry and
 * its `proof.health.warning`; later sightings only mark it seen. Answers whether it warned.
 */
export async function recordFinding(ds: DataSource, tenant: { organizationId: string; productId: string }, f: Finding): Promise<boolean> {
  return ds.transaction(async (em) => {
    const inserted: unknown[] = await em.query(
      `INSERT INTO proof_health_findings (id, organization_id, product_id, check_name, subject_id, day, proof_item_id, placement_id, properties)
       VALUES ($1, $2, $3, $4, $5, (now() AT TIME ZONE 'UTC')::date, $6, $7, $8)
       ON CONFLICT (product_id, check_name, subject_id, day) DO UPDATE SET last_seen_at = now(), resolved_at = NULL
       RETURNING (xmax = 0) AS inserted`,
      [newId('hf'), tenant.organizationId, tenant.productId, f.check, f.subjectId, f.proofItemId, f.placementId, JSON.stringify(f.properties)],
    );
    if (!(inserted[0] as { inserted: boolean }).inserted) return false;
    await appendProofEvent(em, {
      organizationId: tenant.organizationId, productId: tenant.productId, proofItemId: f.proofItemId,
      placementId: f.placementId ?? undefined, actor: SYSTEM_ACTOR, eventType: 'proof.health.warning',
      properties: { check: f.check, ...f.properties },
    });
    return true;
  });
}

/** One run of the product's checks; findings no longer seen are closed. Answers the warnings sent. */
export async function runHealthChecks(ds: DataSource, productId: string, consentExpiryDays: number): Promise<number> {
  const [product] = await ds.query(`SELECT organization_id, active FROM products WHERE id = $1`, [productId]);
  if (!product || !product.active) return 0;
  const tenant = { organizationId: product.organization_id as string, productId };
  const startedAt: Date = (await ds.query(`SELECT now() AS now`))[0].now;
  const findings: Finding[] = [];
  const grants: Array<{ id: string; proof_item_id: string; valid_until: Date }> = await ds.query(
    `SELECT DISTINCT ON (g.proof_item_id) g.id, g.proof_item_id, g.valid_until
       FROM proof_items i JOIN consent_grants g ON g.proof_item_id = i.id AND g.state = 'active'
      WHERE i.product_id = $1 AND i.status = 'approved'
      ORDER BY g.proof_item_id, g.created_at DESC, g.id DESC`,
    [productId],
  );
  const horizon = Date.now() + consentExpiryDays * 86_400_000;
  for (const g of grants) {
    if (g.valid_until && new Date(g.valid_until).getTime() <= horizon) {
      findings.push({
        check: 'consent_expiring', subjectId: g.id, proofItemId: g.proof_item_id, placementId: null,
        properties: { consentGrantId: g.id, dueAt: new Date(g.valid_until).toISOString() },
      });
    }
  }
  const placements: Array<{ id: string }> = await ds.query(`SELECT id FROM proof_placements WHERE product_id = $1 AND state = 'active'`, [productId]);
  for (const p of placements) {
    const { excludedCount } = await publishPlacement(ds, tenant, p.id, true, SYSTEM_ACTOR);
    if (excludedCount > 0) {
      findings.push({ check: 'placement_excluded_items', subjectId: p.id, proofItemId: null, placementId: p.id,
        properties: { placementId: p.id, count: excludedCount } });
    }
  }
  let warned = 0;
  for (const f of findings) if (await recordFinding(ds, tenant, f)) warned += 1;
  await ds.query(
    `UPDATE proof_health_findings SET resolved_at = now()
      WHERE product_id = $1 AND resolved_at IS NULL AND last_seen_at < $2 AND check_name <> 'stream_failed'`,
    [productId, startedAt],
  );
  return warned;
}

export function viewFinding(row: ProofHealthFinding) {
  return {
    id: row.id,
    productId: row.productId,
    check: row.checkName,
    proofItemId: row.proofItemId,
    placementId: row.placementId,
    properties: row.properties as Record<string, unknown>,
    firstSeenAt: row.createdAt.toISOString(),
    lastSeenAt: row.lastSeenAt.toISOString(),
  };
}

export async function openFindings(ds: DataSource, organizationId: string, page: PageRequest,
  productId?: string): Promise<Page<ReturnType<typeof viewFinding>>> {
  const qb = ds.getRepository(ProofHealthFinding).createQueryBuilder('f')
    .where('f.organization_id = :organizationId AND f.resolved_at IS NULL', { organizationId });
  if (productId) qb.andWhere('f.product_id = :productId', { productId });
  return pageOf(qb, 'f', page, viewFinding);
}
