import { DataSource } from 'typeorm';
import { ProofRevocation } from '../entities';
import { PageRequest, pageOf } from '../pagination';

/**
 * Revocations a person has yet to complete (pending or escalated), oldest first, each with the placements
 * that still list the item: the console's queue with its SLA countdown (PAGES.md §5).
 */
export async function openRevocations(ds: DataSource, organizationId: string, page: PageRequest) {
  const qb = ds.getRepository(ProofRevocation).createQueryBuilder('r')
    .where('r.organization_id = :organizationId', { organizationId })
    .andWhere(`r.resolution_state <> 'completed'`);
  const result = await pageOf(qb, 'r', page, (row) => row, 'ASC');
  const itemIds = result.data.map((r) => r.proofItemId);
  const listed: Array<{ proof_item_id: string; id: string; name: string; state: string; product_id: string }> = itemIds.length
    ? await ds.query(
      `SELECT DISTINCT pi.proof_item_id, p.id, p.name, p.state, p.product_id
         FROM proof_placement_items pi JOIN proof_placements p ON p.id = pi.placement_id
        WHERE pi.proof_item_id = ANY($1) AND pi.state = 'active' AND p.state <> 'archived' AND p.organization_id = $2
        ORDER BY p.name, p.id`, [itemIds, organizationId])
    : [];
  const products: Array<{ id: string; product_id: string }> = itemIds.length
    ? await ds.query('SELECT id, product_id FROM proof_items WHERE id = ANY($1)', [itemIds])
    : [];
  return {
    data: result.data.map((r) => ({
      id: r.id,
      proofItemId: r.proofItemId,
      productId: products.find((p) => p.id === r.proofItemId)!.product_id,
      requestText: r.requestText,
      resolutionState: r.resolutionState,
      immediatePolicyAction: r.immediatePolicyAction,
      slaDeadlineAt: r.slaDeadlineAt.toISOString(),
      requestedBy: { type: r.requestedByType, id: r.requestedById },
      createdAt: r.createdAt.toISOString(),
      listedIn: listed.filter((l) => l.proof_item_id === r.proofItemId).map((l) => ({ placementId: l.id, name: l.name, state: l.state })),
    })),
    nextCursor: result.nextCursor,
  };
}
