import type { ConsentGrant, ProofItem } from '../entities';

/** A deleted item whose recovery window has closed: its words are gone for good (410). */
export function recoveryClosed(item: ProofItem, now = new Date()): boolean {
  return item.status === 'deleted'
    && (item.recoveryClosedAt !== null || (item.recoveryClosesAt !== null && item.recoveryClosesAt <= now));
}

/** The consent summary status of an item, from its grants. */
export function consentStatus(item: ProofItem, grants: ConsentGrant[], now = new Date()): string {
  if (item.status === 'revoked') return 'revoked';
  if (item.renderHold) return 'revocation_requested';
  const active = grants.filter((g) => g.state === 'active');
  if (grants.length === 0) return 'none';
  if (active.length === 0) return 'revoked';
  return active.some((g) => !g.validUntil || g.validUntil > now) ? 'granted' : 'expired';
}
