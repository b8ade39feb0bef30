import { DataSource } from 'typeorm';
import { conflict } from '../../runtime/service-error';
import { ProofItem } from '../entities';
import { SYSTEM_ACTOR, appendProofEvent } from './proof-ledger';
import { findItem, viewItem } from './proof-items';
import { enqueueWorkflowCommand } from '../workflow-commands';
import { MediaStore } from '../../runtime/media-store';
import { eraseItemMedia, eraseItemWords } from './proof-purge';
import { databaseNow, dbNow } from '../clock';

function viewDeletion(item: ProofItem) {
  return { item: viewItem(item), deletedAt: item.deletedAt?.toISOString() ?? null, recoveryClosesAt: item.recoveryClosesAt?.toISOString() ?? null };
}

/** A person deletes an item: it leaves every list and render, and may be restored until the window closes. */
export async function deleteItem(ds: DataSource, organizationId: string, itemId: string, teammateId: string, windowMs: number) {
  return ds.transaction(async (em) => {
    const item = await findItem(em, { organizationId }, itemId, true);
    if (item.status === 'deleted') throw conflict('this item is already deleted');
    const now = await databaseNow(em);
    await em.getRepository(ProofItem).update(itemId, {
      status: 'deleted', statusBeforeDelete: item.status, deletedAt: now,
      recoveryClosesAt: new Date(now.getTime() + windowMs), recoveryClosedAt: null, updatedAt: now,
    });
    await appendProofEvent(em, {
      organizationId, productId: item.productId, proofItemId: itemId, actor: { type: 'teammate', id: teammateId },
      eventType: 'proof.item.deleted', properties: {},
    });
    const deleted = await em.getRepository(ProofItem).findOneByOrFail({ id: itemId });
    // The purge rides on this transaction: a Temporal outage delays it, never drops it.
    await enqueueWorkflowCommand(em, {
      type: 'proof.deletion.deleted', tenant: { organizationId: deleted.organizationId, productId: deleted.productId }, proofItemId: itemId,
      deletedAt: deleted.deletedAt!.toISOString(), recoveryClosesAt: deleted.recoveryClosesAt!.toISOString(),
    });
    return viewDeletion(deleted);
  });
}

export async function restoreItem(ds: DataSource, organizationId: string, itemId: string, teammateId: string) {
  return ds.transaction(async (em) => {
    const item = await findItem(em, { organizationId }, itemId, true);
    if (item.status !== 'deleted') throw conflict('this item is not deleted');
    await em.getRepository(ProofItem).update(itemId, {
      status: item.statusBeforeDelete ?? 'submitted', statusBeforeDelete: null, deletedAt: null,
      recoveryClosesAt: null, updatedAt: dbNow,
    });
    await appendProofEvent(em, {
      organizationId, productId: item.productId, proofItemId: itemId, actor: { type: 'teammate', id: teammateId },
      eventType: 'proof.item.restored', properties: {},
    });
    await enqueueWorkflowCommand(em, { type: 'proof.deletion.restored', proofItemId: itemId });
    return viewDeletion(await em.getRepository(ProofItem).findOneByOrFail({ id: itemId }));
  });
}

/**
 * Closes the recovery window of the deletion made at `deletedAt` (a later delete-restore-delete has
 * its own): the customer's words, contact details and consent evidence are erased from the item, its
 * versions and every other copy (eraseItemWords), then its media's bytes leave the store; version rows
 * and their content hashes stay, so the ledger still points at something. Idempotent: a retry after the
 * commit erases the bytes again and writes nothing twice.
 */
export async function closeRecoveryWindow(ds: DataSource, store: MediaStore, itemId: string, deletedAt: string): Promise<boolean> {
  const closed = await ds.transaction(async (em) => {
    // TypeORM answers an UPDATE ... RETURNING as [rows, affected].
    const [rows]: [Array<{ organization_id: string; product_id: string }>, number] = await em.query(
      `UPDATE proof_items SET recovery_closed_at = now(), customer_email = NULL, customer_name = NULL
        WHERE id = $1 AND status = 'deleted' AND deleted_at = $2 AND recovery_closed_at IS NULL
        RETURNING organization_id, product_id`,
      [itemId, deletedAt],
    );
    const row = rows[0];
    if (!row) return false;
    await em.query(`UPDATE consent_grants SET evidence = NULL WHERE proof_item_id = $1`, [itemId]);
    await em.query(`UPDATE proof_versions SET content = '{}', semantic_diff = '{}' WHERE proof_item_id = $1`, [itemId]);
    await eraseItemWords(em, itemId);
    await appendProofEvent(em, {
      organizationId: row.organization_id, productId: row.product_id, proofItemId: itemId, actor: SYSTEM_ACTOR,
      eventType: 'proof.item.purged', properties: {},
    });
    return true;
  });
  const [purged] = await ds.query(`SELECT 1 FROM proof_items WHERE id = $1 AND recovery_closed_at IS NOT NULL`, [itemId]);
  if (purged) await eraseItemMedia(ds, store, itemId);
  return closed;
}
