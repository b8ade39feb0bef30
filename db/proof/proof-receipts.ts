import { DataSource, EntityManager } from 'typeorm';
import { ConsentGrant, ProofItem } from '../entities';
import { CANONICALIZATION } from '../rules/canonical-json';
import { newId } from '../rules/ids';
import { consentStatus, recoveryClosed } from '../rules/proof-status';
import { ClaimedSignature, Signature, activeSigningKey, signCanonical, verifyCanonical } from './proof-signing';

export const RECEIPT_SCHEMA = 'service-proof-receipt-v1';

/**
 * Issues the portable receipt of a consent grant inside the granting transaction: what the customer
 * approved (the wording by its content hash, never the words or who they are) and how it may be used,
 * signed with the service's Ed25519 key.
 */
export async function issueReceipt(ds: DataSource, em: EntityManager, grant: ConsentGrant, item: ProofItem, contentHash: string) {
  const key = await activeSigningKey(ds, em);
  const id = newId('rcpt');
  const payload = {
    schema: RECEIPT_SCHEMA,
    canonicalization: CANONICALIZATION,
    receiptId: id,
    issuedAt: grant.createdAt.toISOString(),
    productId: item.productId,
    proofItemId: item.id,
    consentGrantId: grant.id,
    approvedVersionId: grant.approvedVersionId,
    contentHash,
    receiptHash: grant.receiptHash,
    terms: {
      displayMode: grant.displayMode,
      identityFields: grant.identityFields,
      channels: grant.channels,
      products: grant.products,
      media: grant.media,
      paidUseAllowed: grant.paidUseAllowed,
      translationAllowed: grant.translationAllowed,
      geography: grant.geography,
      validUntil: grant.validUntil?.toISOString() ?? null,
      customerApprovedWording: grant.customerApprovedWording,
    },
  };
  const signature = signCanonical(key, payload);
  await em.query(
    `INSERT INTO proof_receipts (id, consent_grant_id, proof_item_id, key_id, payload, signature) VALUES ($1, $2, $3, $4, $5, $6)`,
    [id, grant.id, item.id, key.kid, JSON.stringify(payload), signature.value],
  );
}

/** The signed receipt; null for an unknown id or an item deleted (its customer's data is going away). */
export async function readReceipt(ds: DataSource, id: string) {
  const rows: Array<{ payload: Record<string, unknown>; signature: string; key_id: string; status: string }> = await ds.query(
    `SELECT r.payload, r.signature, r.key_id, i.status FROM proof_receipts r JOIN proof_items i ON i.id = r.proof_item_id WHERE r.id = $1`, [id]);
  if (rows.length === 0 || rows[0].status === 'deleted') return null;
  const signature: Signature = { alg: 'EdDSA', kid: rows[0].key_id, value: rows[0].signature };
  return { receipt: rows[0].payload, signature };
}

export interface ReceiptClaim {
  receipt: Record<string, unknown>;
  signature: ClaimedSignature;
}

/**
 * Signature first: a receipt we did not sign is `invalid_signature` whatever it says. Then the live
 * status of the grant it names, where a revocation (filed or completed) always wins.
 */
export async function verifyReceipt(ds: DataSource, claim: ReceiptClaim, now: Date = new Date()) {
  const checkedAt = now.toISOString();
  if (!(await verifyCanonical(ds, claim.receipt, claim.signature))) {
    return { signatureValid: false, status: 'invalid_signature', valid: false, checkedAt };
  }
  const grant = await ds.getRepository(ConsentGrant).findOneBy({ id: String(claim.receipt.consentGrantId) });
  const item = grant ? await ds.getRepository(ProofItem).findOneBy({ id: grant.proofItemId }) : null;
  let status: string;
  if (!grant || !item || recoveryClosed(item, now)) status = 'erased';
  else if (item.status === 'deleted') status = 'deleted';
  else status = consentStatus(item, [grant], now);
  return { signatureValid: true, status, valid: status === 'granted', checkedAt };
}
