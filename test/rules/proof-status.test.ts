import assert from 'node:assert/strict';
import type { ConsentGrant, ProofItem } from '../../db/entities';
import { consentStatus, recoveryClosed } from '../../db/rules/proof-status';

const now = new Date('2026-05-01T00:00:00Z');
const item = (patch: Partial<ProofItem> = {}) =>
  ({ status: 'approved', renderHold: false, recoveryClosesAt: null, recoveryClosedAt: null, ...patch }) as ProofItem;
const grant = (patch: Partial<ConsentGrant> = {}) => ({ state: 'active', validUntil: null, ...patch }) as ConsentGrant;

describe('proof status (pure)', () => {
  it('recovery of a deleted item closes at its deadline or when closed early, never for a live item', () => {
    const deadline = new Date(now.getTime() + 1000);
    assert.equal(recoveryClosed(item({ status: 'deleted', recoveryClosesAt: deadline }), now), false);
    assert.equal(recoveryClosed(item({ status: 'deleted', recoveryClosesAt: deadline }), deadline), true);
    assert.equal(recoveryClosed(item({ status: 'deleted', recoveryClosesAt: deadline, recoveryClosedAt: now }), now), true);
    assert.equal(recoveryClosed(item({ status: 'approved', recoveryClosesAt: new Date(0) }), now), false);
  });

  it('consent status from the grants', () => {
    assert.equal(consentStatus(item(), [], now), 'none');
    assert.equal(consentStatus(item(), [grant()], now), 'granted');
    assert.equal(consentStatus(item(), [grant({ validUntil: new Date(now.getTime() + 1) })], now), 'granted');
    assert.equal(consentStatus(item(), [grant({ validUntil: now })], now), 'expired');
    assert.equal(consentStatus(item(), [grant({ state: 'revoked' }), grant({ state: 'superseded' })], now), 'revoked');
    assert.equal(consentStatus(item(), [grant({ state: 'revoked' }), grant({ validUntil: new Date(0) }), grant()], now), 'granted');
  });

  it('a revoked item, or one held for revocation, says so whatever its grants', () => {
    assert.equal(consentStatus(item({ status: 'revoked' }), [grant()], now), 'revoked');
    assert.equal(consentStatus(item({ renderHold: true }), [grant()], now), 'revocation_requested');
    assert.equal(consentStatus(item({ renderHold: true }), [], now), 'revocation_requested');
  });
});
