import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import canonicalize from 'canonicalize';
import { currentRender, renderPlacement } from '../../db/proof/proof-render';
import { activeSigningKey, rotateSigningKey, signText } from '../../db/proof/proof-signing';
import { legacySortedKeysJson } from '../../db/rules/canonical-json';
import { setProductActive } from '../../db/platform/tenancy';
import { call, withKey } from '../support/fixtures';
import {
  PlacementTenant, approvedItem, countingDataSource, createPlacement, createPlacementTenant, place, publishedPlacement, submissionBody, submit,
} from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { route } from '../support/routes';

// An off-the-shelf RFC 8785 implementation, as a verifier would use it, so the check does not lean on the service's code.
const canon = (v: unknown): string => canonicalize(v)!;

async function verifiesAgainstJwks(payload: unknown, signature: { alg: string; kid: string; value: string }): Promise<boolean> {
  const jwks = (await call({ method: 'GET', url: '/api/public/proof/receipts/keys' })).json();
  const jwk = jwks.keys.find((k: { kid: string }) => k.kid === signature.kid);
  if (!jwk) return false;
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  return verify(null, Buffer.from(canon(payload), 'utf8'), key, Buffer.from(signature.value, 'base64url'));
}

const render = (id: string, headers: Record<string, string> = {}) => call({ method: 'GET', url: route('/api/public/proof/render/{id}', { id }), headers });
const beacon = (payload: string) => call({ method: 'POST', url: '/api/public/proof/events', payload, headers: { 'content-type': 'text/plain' } });

describe('public proof delivery', () => {
  let tenant: PlacementTenant;

  before(async () => {
    tenant = await createPlacementTenant();
  });

  it('renders a signed manifest of the eligible items only, verifiable with the JWKS; strong ETag and 304', async () => {
    const a = await approvedItem(tenant);
    const b = await approvedItem(tenant);
    const unapproved = await submit(tenant);
    const id = await publishedPlacement(tenant, [a.proofItemId, unapproved.proofItemId, b.proofItemId]);
    const res = await render(id);
    assert.equal(res.statusCode, 200, res.body);
    const { manifest, signature } = res.json();
    assert.equal(manifest.schema, 'service-proof-render-v1');
    assert.equal(manifest.canonicalization, 'RFC8785');
    assert.deepEqual(manifest.items.map((i: { proofItemId: string }) => i.proofItemId), [a.proofItemId, b.proofItemId]);
    assert.equal(signature.alg, 'EdDSA');
    assert.ok(await verifiesAgainstJwks(manifest, signature));
    assert.ok(!(await verifiesAgainstJwks({ ...manifest, items: manifest.items.slice(1) }, signature)), 'a changed manifest fails');
    const etag = res.headers.etag as string;
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/, 'strong ETag');
    const again = await render(id, { 'if-none-match': etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal((await render(id, { 'if-none-match': '"other"' })).statusCode, 200);
  });

  it('a render costs one query however many items the placement holds', async () => {
    const id = await publishedPlacement(tenant, [(await approvedItem(tenant)).proofItemId]);
    const { ds, statements } = await countingDataSource();
    try {
      await renderPlacement(ds, id); // loads the signing key once per process
      const perRender = async () => {
        statements.length = 0;
        assert.ok(await renderPlacement(ds, id));
        return statements.length;
      };
      assert.equal(await perRender(), 1, statements.join('\n'));
      for (let i = 0; i < 4; i++) await place(tenant, id, { proofItemId: (await approvedItem(tenant)).proofItemId });
      assert.equal(await perRender(), 1, statements.join('\n'));
    } finally {
      await ds.destroy();
    }
  });

  it('shows only the consented identity, in the display mode; paused and draft placements, and those of an inactive product, render nothing (404)',
    async () => {
      const s = await approvedItem(tenant, submissionBody({
        consent: { ...submissionBody().consent, displayMode: 'initials', identityFields: ['name'] },
      }));
      const id = await publishedPlacement(tenant, [s.proofItemId]);
      const item = (await render(id)).json().manifest.items[0];
      assert.deepEqual(item.attribution, { name: 'A. L.' });
      assert.ok(!JSON.stringify(item).includes('ada@example.com') && !JSON.stringify(item).includes('Analytical'));
      await call(withKey(tenant.publishKey, { method: 'PATCH', url: `/api/v1/proof/placements/${id}`, payload: { state: 'paused' } }));
      assert.equal((await render(id)).statusCode, 404);
      await call(withKey(tenant.publishKey, { method: 'PATCH', url: `/api/v1/proof/placements/${id}`, payload: { state: 'active' } }));
      assert.equal((await render(id)).statusCode, 200);
      await setProductActive(ctx.dataSource, tenant.product.id, false);
      assert.equal((await render(id)).statusCode, 404, 'an inactive product publishes nothing');
      await setProductActive(ctx.dataSource, tenant.product.id, true);
      assert.equal((await render((await createPlacement(tenant)).id)).statusCode, 404);
      assert.equal((await render('plc_unknown000000000')).statusCode, 404);
    });

  it('a revocation shows in the very next render and in receipt verification; a forged receipt fails first', async () => {
    const a = await approvedItem(tenant);
    const b = await approvedItem(tenant);
    const id = await publishedPlacement(tenant, [a.proofItemId, b.proofItemId]);
    const first = await render(id);
    const receiptId = first.json().manifest.items[0].receiptId;
    const receipt = (await call({ method: 'GET', url: `/api/public/proof/receipts/${receiptId}` })).json().data;
    assert.equal(receipt.receipt.proofItemId, a.proofItemId);
    assert.equal(receipt.receipt.canonicalization, 'RFC8785');
    assert.deepEqual(receipt.receipt.terms.channels, ['website', 'in_app', 'email']);
    assert.ok(await verifiesAgainstJwks(receipt.receipt, receipt.signature));
    const verifyReceipt = async (body: object) => (await call({ method: 'POST', url: '/api/public/proof/receipts/verify', payload: body })).json().data;
    assert.deepEqual({ ...(await verifyReceipt(receipt)), checkedAt: null }, { signatureValid: true, status: 'granted', valid: true, checkedAt: null });
    const forged = { ...receipt, receipt: { ...receipt.receipt, terms: { ...receipt.receipt.terms, paidUseAllowed: true } } };
    assert.equal((await verifyReceipt(forged)).status, 'invalid_signature');

    const revoked = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${a.proofItemId}/revoke`, payload: {} }));
    assert.equal(revoked.statusCode, 202, revoked.body);
    const next = await render(id, { 'if-none-match': first.headers.etag as string });
    assert.equal(next.statusCode, 200, 'the ETag changed');
    assert.deepEqual(next.json().manifest.items.map((i: { proofItemId: string }) => i.proofItemId), [b.proofItemId]);
    const live = await verifyReceipt(receipt);
    assert.deepEqual([live.signatureValid, live.status, live.valid], [true, 'revocation_requested', false]);
  });

  it('a receipt signed before the cut-over to RFC 8785 (no canonicalization named, the sorted-keys form) still verifies', async () => {
    const a = await approvedItem(tenant);
    const id = await publishedPlacement(tenant, [a.proofItemId]);
    const receiptId = (await render(id)).json().manifest.items[0].receiptId;
    const current = (await call({ method: 'GET', url: `/api/public/proof/receipts/${receiptId}` })).json().data;
    const { canonicalization, ...old } = current.receipt;
    assert.equal(canonicalization, 'RFC8785');
    // Signed as the service signed receipts before the cut-over.
    const signature = signText(await activeSigningKey(ctx.dataSource), legacySortedKeysJson(old));
    const verifyReceipt = async (body: object) => (await call({ method: 'POST', url: '/api/public/proof/receipts/verify', payload: body })).json().data;
    assert.deepEqual([(await verifyReceipt({ receipt: old, signature })).status, (await verifyReceipt({ receipt: old, signature })).valid], ['granted', true]);
    // Naming RFC 8785 or an unknown canonicalization on an old signature does not pass: the name is signed too.
    assert.equal((await verifyReceipt({ receipt: { ...old, canonicalization: 'sorted-keys-json' }, signature })).status, 'invalid_signature');
    assert.equal((await verifyReceipt({ receipt: { ...old, terms: { ...old.terms, paidUseAllowed: !old.terms.paidUseAllowed } }, signature })).status,
      'invalid_signature');
  });

  it('the reused render never outlives what it decided from: consent change, pause, product deactivation, revocation, expiry', async () => {
    const a = await approvedItem(tenant);
    const b = await approvedItem(tenant);
    const id = await publishedPlacement(tenant, [a.proofItemId, b.proofItemId]);
    const ids = (res: Awaited<ReturnType<typeof render>>) => res.json().manifest.items.map((i: { proofItemId: string }) => i.proofItemId);
    let etag = (await render(id)).headers.etag as string;
    assert.equal((await render(id, { 'if-none-match': etag })).statusCode, 304, 'unchanged: revalidates');
    const restored = async () => {
      const res = await render(id);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(ids(res), [a.proofItemId, b.proofItemId]);
      etag = res.headers.etag as string;
      assert.equal((await render(id, { 'if-none-match': etag })).statusCode, 304);
    };

    await ctx.dataSource.query(`UPDATE consent_grants SET channels = '{email}' WHERE proof_item_id = $1`, [a.proofItemId]);
    const afterConsent = await render(id, { 'if-none-match': etag });
    assert.equal(afterConsent.statusCode, 200, 'a consent change shows in the very next render');
    assert.deepEqual(ids(afterConsent), [b.proofItemId]);
    await ctx.dataSource.query(`UPDATE consent_grants SET channels = '{website,in_app,email}' WHERE proof_item_id = $1`, [a.proofItemId]);
    await restored();

    await call(withKey(tenant.publishKey, { method: 'PATCH', url: `/api/v1/proof/placements/${id}`, payload: { state: 'paused' } }));
    assert.equal((await render(id, { 'if-none-match': etag })).statusCode, 404, 'a pause shows in the very next render');
    await call(withKey(tenant.publishKey, { method: 'PATCH', url: `/api/v1/proof/placements/${id}`, payload: { state: 'active' } }));
    await restored();

    await setProductActive(ctx.dataSource, tenant.product.id, false);
    assert.equal((await render(id, { 'if-none-match': etag })).statusCode, 404, 'a product deactivation shows in the very next render');
    await setProductActive(ctx.dataSource, tenant.product.id, true);
    await restored();

    const revoked = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${b.proofItemId}/revoke`, payload: {} }));
    assert.equal(revoked.statusCode, 202, revoked.body);
    const afterRevocation = await render(id, { 'if-none-match': etag });
    assert.equal(afterRevocation.statusCode, 200, 'a revocation shows in the very next render');
    assert.deepEqual(ids(afterRevocation), [a.proofItemId]);

    const soon = new Date(Date.now() + 60_000);
    await ctx.dataSource.query(`UPDATE consent_grants SET valid_until = $2 WHERE proof_item_id = $1`, [a.proofItemId, soon]);
    const before = await currentRender(ctx.dataSource, id, new Date(soon.getTime() - 1_000));
    assert.ok(before && JSON.parse(before.body()).manifest.items.length === 1);
    const after = await currentRender(ctx.dataSource, id, new Date(soon.getTime() + 1_000));
    assert.ok(after && JSON.parse(after.body()).manifest.items.length === 0, 'a consent expiring is decided at its time, not cached past it');
  });

  it('old keys stay in the JWKS after rotation and still verify; new renders use the new key', async () => {
    const a = await approvedItem(tenant);
    const id = await publishedPlacement(tenant, [a.proofItemId]);
    const before = (await render(id)).json();
    const kid = await rotateSigningKey(ctx.dataSource);
    const keys = (await call({ method: 'GET', url: '/api/public/proof/receipts/keys' })).json().keys;
    assert.ok(keys.some((k: { kid: string; status: string }) => k.kid === before.signature.kid && k.status === 'retired'));
    assert.equal(keys[0].kid, kid);
    assert.ok(await verifiesAgainstJwks(before.manifest, before.signature));
    const after = (await render(id)).json();
    assert.equal(after.signature.kid, kid);
    assert.ok(await verifiesAgainstJwks(after.manifest, after.signature));
  });

  it('the beacon counts with the manifest\'s event token (once per token, type and day) and refuses a forged one', async () => {
    const a = await approvedItem(tenant);
    const id = await publishedPlacement(tenant, [a.proofItemId]);
    const token: string = (await render(id)).json().manifest.items[0].eventToken;
    for (const type of ['impression', 'impression', 'click']) {
      const res = await beacon(JSON.stringify({ token, type }));
      assert.equal(res.statusCode, 204, res.body);
      assert.equal(res.headers['set-cookie'], undefined);
    }
    const [claims, kid, mac] = token.split('.');
    const otherItem = Buffer.from(JSON.stringify([id, 'prf_forged0000000000', '2999-01-01'])).toString('base64url');
    for (const forged of [`${otherItem}.${kid}.${mac}`, `${claims}.${kid}.${Buffer.alloc(32).toString('base64url')}`, `${claims}.sk_nokey.${mac}`, 'x']) {
      assert.equal((await beacon(JSON.stringify({ token: forged, type: 'click' }))).statusCode, 403, forged);
    }
    assert.equal((await beacon('not json')).statusCode, 400);
    assert.equal((await beacon(JSON.stringify({ token, type: 'hover' }))).statusCode, 400);
    const items = (await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/placements/${id}/items` }))).json().data;
    assert.deepEqual(items[0].engagement, { impression: 1, click: 1 });
  });
});
