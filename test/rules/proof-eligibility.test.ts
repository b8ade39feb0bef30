import assert from 'node:assert/strict';
import {
  EligibilityContext, EligibilityGrant, EligibilityInput, EligibilityItem, EligibilityVersion, decideEligibility, evaluateEligibility,
} from '../../db/rules/proof-eligibility';

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

describe('proof eligibility: every consent dimension (table)', () => {
  const now = new Date('2026-06-01T00:00:00Z');
  const version = (patch: Partial<EligibilityVersion> = {}): EligibilityVersion => ({
    id: 'pver_1', approvalState: 'approved', locale: null, originalLocale: null, rating: 5, ...patch,
  });
  const fullGrant = (patch: Partial<EligibilityGrant> = {}) => grant({
    displayMode: 'full_name', products: { all: true }, media: ['text'], translationAllowed: true, geography: ['*'], ...patch,
  });
  const base = (): EligibilityInput => ({ item: item({ type: 'text' }), version: version(), grants: [fullGrant()], revocations: [] });
  const context = (patch: Partial<EligibilityContext> = {}): EligibilityContext => ({ channel: 'website', now, ...patch });

  const rows: Array<[string, (i: EligibilityInput) => EligibilityInput, Partial<EligibilityContext>, string[]]> = [
    ['eligible', (i) => i, {}, []],
    ['channel', (i) => i, { channel: 'email' }, ['channel_not_consented']],
    ['product', (i) => ({ ...i, grants: [fullGrant({ products: { ids: ['prd_a'] } })] }), { productId: 'prd_b' }, ['product_not_consented']],
    ['product listed', (i) => ({ ...i, grants: [fullGrant({ products: { ids: ['prd_a'] } })] }), { productId: 'prd_a' }, []],
    ['media: a video wall needs video consent', (i) => ({ ...i, item: item({ type: 'video' }) }), { placementType: 'wall' }, ['media_not_consented']],
    ['media: a widget quotes the words', (i) => ({ ...i, item: item({ type: 'video' }) }), { placementType: 'widget' }, []],
    ['identity fields', (i) => i, { policy: { requiredIdentityFields: ['company'] } }, ['identity_fields_not_consented']],
    ['identity fields of an anonymous grant', (i) => ({ ...i, grants: [fullGrant({ displayMode: 'anonymous' })] }),
      { policy: { requiredIdentityFields: ['name'] } }, ['identity_fields_not_consented']],
    ['paid use by channel', (i) => ({ ...i, grants: [fullGrant({ channels: ['paid_ads'] })] }), { channel: 'paid_ads' }, ['paid_use_not_allowed']],
    ['paid use by policy', (i) => i, { policy: { paidUse: true } }, ['paid_use_not_allowed']],
    ['paid use allowed', (i) => ({ ...i, grants: [fullGrant({ paidUseAllowed: true })] }), { paidUse: true }, []],
    ['translation', (i) => ({ ...i, version: version({ locale: 'de', originalLocale: 'en' }), grants: [fullGrant({ translationAllowed: false })] }), {},
      ['translation_not_allowed']],
    ['locale', (i) => ({ ...i, version: version({ locale: 'de-DE' }) }), { locale: 'fr' }, ['locale_mismatch']],
    ['geography', (i) => ({ ...i, grants: [fullGrant({ geography: ['DE'] })] }), { geography: 'US' }, ['geography_not_consented']],
    ['geography unknown', (i) => ({ ...i, grants: [fullGrant({ geography: ['DE'] })] }), { geography: null }, ['geography_not_consented']],
    ['geography listed', (i) => ({ ...i, grants: [fullGrant({ geography: ['de'] })] }), { geography: 'DE' }, []],
    ['validUntil', (i) => ({ ...i, grants: [fullGrant({ validUntil: now })] }), {}, ['consent_expired']],
    ['customer-approved wording', (i) => ({ ...i, item: item({ approvedPublicVersionId: 'pver_2' }), version: version({ id: 'pver_2' }) }), {},
      ['wording_not_customer_approved']],
    ['revoked consent', (i) => ({ ...i, grants: [fullGrant({ state: 'revoked' })] }), {}, ['consent_revoked']],
    ['revoked item', (i) => ({ ...i, item: item({ status: 'revoked', revokedAt: now, approvedPublicVersionId: null }) }), {}, ['revoked', 'not_approved']],
    ['completed revocation', (i) => ({ ...i, revocations: [{ resolutionState: 'completed' }] }), {}, ['revoked']],
    ['pending revocation', (i) => ({ ...i, revocations: [{ resolutionState: 'pending' }] }), {}, ['revocation_pending']],
    ['render hold', (i) => ({ ...i, item: item({ renderHold: true }) }), {}, ['revocation_pending']],
    ['unapproved version', (i) => ({ ...i, version: version({ id: 'pver_3', approvalState: 'draft' }) }), {},
      ['version_not_approved', 'wording_not_customer_approved']],
    ['approved but not public version', (i) => ({ ...i, version: version({ id: 'pver_0' }), grants: [fullGrant({ customerApprovedWording: false })] }), {},
      ['version_not_public']],
    ['deleted item', (i) => ({ ...i, item: item({ status: 'deleted' }) }), {}, ['deleted']],
    ['no consent', (i) => ({ ...i, grants: [] }), {}, ['no_consent']],
    ['policy: verified only', (i) => ({ ...i, item: item({ verificationState: 'unverified' }) }), { policy: { requireVerified: true } },
      ['policy_requires_verified']],
    ['policy: no incentives', (i) => ({ ...i, item: item({ incentive: { offered: true } }) }), { policy: { excludeIncentivized: true } },
      ['policy_excludes_incentivized']],
    ['policy: rating', (i) => ({ ...i, version: version({ rating: 3 }) }), { policy: { minRating: 4 } }, ['policy_rating_below_minimum']],
  ];
  for (const [name, input, ctxPatch, reasons] of rows) {
    it(`${name}: ${reasons.length ? reasons.join(', ') : 'eligible'}`, () => {
      const decision = decideEligibility(input(base()), context(ctxPatch));
      assert.deepEqual(decision.reasons, reasons);
      assert.equal(decision.eligible, reasons.length === 0);
      if (decision.eligible) assert.equal(decision.grantId, 'cns_1');
    });
  }

  it('the newest grant that allows the use counts; anonymous shows no identity fields', () => {
    const older = fullGrant({ id: 'cns_old', createdAt: new Date('2025-01-01T00:00:00Z') });
    const newer = fullGrant({ id: 'cns_new', displayMode: 'anonymous', createdAt: new Date('2026-01-01T00:00:00Z') });
    const decision = decideEligibility({ ...base(), grants: [older, newer] }, context());
    assert.equal(decision.grantId, 'cns_new');
    assert.deepEqual(decision.identityFields, []);
  });

  it('is deterministic: the same input gives the same decision', () => {
    assert.deepEqual(decideEligibility(base(), context()), decideEligibility(base(), context()));
  });
});
