import assert from 'node:assert/strict';
import { canonicalJson } from '../db/canonical-json';
import { EligibilityGrant, EligibilityItem, evaluateEligibility } from '../db/proof-eligibility';
import { semanticDiff } from '../db/proof-semantic-diff';

const item = (patch: Partial<EligibilityItem> = {}): EligibilityItem => ({
  status: 'approved', approvedPublicVersionId: 'pver_1', renderHold: false, revokedAt: null,
  incentive: { offered: false }, verificationState: 'verified_customer', ...patch,
});
const grant = (patch: Partial<EligibilityGrant> = {}): EligibilityGrant => ({
  id: 'cns_1', state: 'active', approvedVersionId: 'pver_1', channels: ['website', 'paid_ads'], identityFields: ['name'],
  paidUseAllowed: false, validUntil: null, customerApprovedWording: true, createdAt: new Date('2026-01-01T00:00:00Z'), ...patch,
});
const reasonsFor = (channel: string, i: EligibilityItem, grants: EligibilityGrant[]) =>
  evaluateEligibility(i, grants).find((d) => d.channel === channel)!.reasons;

describe('proof eligibility evaluator (pure)', () => {
  it('eligible on a consented channel of an approved item', () => {
    const web = evaluateEligibility(item(), [grant()]).find((d) => d.channel === 'website')!;
    assert.deepEqual(web, {
      channel: 'website', eligible: true, reasons: [], grantId: 'cns_1', identityFields: ['name'], disclosure: null, labels: ['verified_customer'],
    });
  });

  it('revocation wins over approval, pending or completed', () => {
    assert.deepEqual(reasonsFor('website', item({ renderHold: true }), [grant()]), ['revocation_pending']);
    assert.deepEqual(reasonsFor('website', item({ status: 'revoked', revokedAt: new Date() }), [grant()]), ['revoked']);
  });

  it('paid ads need paid use; expired or revoked consent counts for nothing; no consent at all says so', () => {
    assert.deepEqual(reasonsFor('paid_ads', item(), [grant()]), ['paid_use_not_allowed']);
    assert.deepEqual(reasonsFor('paid_ads', item(), [grant({ paidUseAllowed: true })]), []);
    assert.deepEqual(reasonsFor('website', item(), [grant({ validUntil: new Date(Date.now() - 1000) })]), ['consent_expired']);
    assert.deepEqual(reasonsFor('website', item(), [grant({ state: 'revoked' })]), ['consent_revoked']);
    assert.deepEqual(reasonsFor('website', item(), []), ['no_consent']);
    assert.deepEqual(reasonsFor('email', item({ approvedPublicVersionId: null }), [grant()]), ['not_approved', 'channel_not_consented']);
  });

  it('a public wording the customer did not approve is not eligible when they approved exact wording', () => {
    assert.deepEqual(reasonsFor('website', item({ approvedPublicVersionId: 'pver_2' }), [grant()]), ['wording_not_customer_approved']);
    assert.deepEqual(reasonsFor('website', item({ approvedPublicVersionId: 'pver_2' }), [grant({ customerApprovedWording: false })]), []);
  });

  it('an incentive is disclosed and labelled', () => {
    const web = evaluateEligibility(item({ incentive: { offered: true, description: '$20 gift card' }, verificationState: 'unverified' }), [grant()])[0];
    assert.equal(web.disclosure, 'Incentivized: $20 gift card');
    assert.deepEqual(web.labels, ['unverified', 'incentivized']);
  });
});

describe('semantic diff and canonical JSON (pure)', () => {
  it('reports words, numbers, rating, attribution and title', () => {
    const diff = semanticDiff(
      { text: 'Support answered within 2 hours, always friendly.', title: 'Fast', rating: 5, attribution: { name: 'Ada', company: 'A Ltd' } },
      { text: 'Support answered within 20 minutes, always helpful.', title: 'Fast', rating: 5, attribution: { name: 'Ada', title: 'CTO' } },
    );
    assert.deepEqual(diff.words, { added: ['helpful', 'minutes'], removed: ['friendly', 'hours'] });
    assert.deepEqual(diff.numbers, { added: ['20'], removed: ['2'] });
    assert.equal(diff.rating, null);
    assert.deepEqual(diff.attribution, { added: ['title'], removed: ['company'], changed: [] });
    assert.equal(diff.title, null);
    assert.equal(diff.changed, true);
    assert.equal(semanticDiff({ text: 'Same.' }, { text: 'Same.' }).changed, false);
  });

  it('canonical JSON sorts keys at every level and keeps array order', () => {
    assert.equal(canonicalJson({ b: [3, { z: 1, a: 'é' }], a: null }), '{"a":null,"b":[3,{"a":"é","z":1}]}');
  });
});
