import assert from 'node:assert/strict';
import { escapeXml, quoteCardSvg, wrap } from '../../db/rules/proof-quote-card';
import { asTeammate, call, errorCode, withKey } from '../support/fixtures';
import {
  PlacementTenant, approvedItem, createPlacementTenant, publishedPlacement, submissionBody, submit,
} from '../support/proof-fixtures';
import { route } from '../support/routes';

const card = { format: 'square' as const, quote: 'Setup took <script>alert(1)</script> & 2 minutes.', attribution: 'Ada', disclosure: null,
  theme: { background: '#ffffff', foreground: '#000000', accent: '#ff0000' } };

describe('quote cards (pure)', () => {
  it('the same input gives byte-identical SVG; markup in a quote stays text', () => {
    const svg = quoteCardSvg(card);
    assert.equal(svg, quoteCardSvg({ ...card }));
    assert.ok(!svg.includes('<script>'));
    assert.ok(svg.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && svg.includes('&amp;'));
    assert.equal(escapeXml('"\'\u0001'), '&quot;&apos;');
  });

  it('wraps long quotes within the width, shrinks to fit, and refuses what never fits', () => {
    assert.deepEqual(wrap('aaa bbb ccc dddddddd', 7), ['aaa bbb', 'ccc', 'ddddddd', 'd']);
    const long = 'We moved every team to it within a week and never looked back. '.repeat(6);
    for (const format of ['square', 'portrait', 'landscape', 'story'] as const) {
      const svg = quoteCardSvg({ ...card, format, quote: long });
      assert.ok(svg.split('<text').length > 4, `${format} wraps into lines`);
    }
    assert.throws(() => quoteCardSvg({ ...card, format: 'landscape', quote: long.repeat(10) }),
      (err: { details: Array<{ message: string }> }) => /shorter verbatim excerpt/.test(err.details[0].message));
  });
});

describe('quote card assets and public media', () => {
  let tenant: PlacementTenant;
  const generate = (payload: object, key = tenant.key) => call(withKey(key, { method: 'POST', url: '/api/v1/proof/assets/generate', payload }));
  const media = (url: string, headers: Record<string, string> = {}) => call({ method: 'GET', url, headers });

  before(async () => {
    tenant = await createPlacementTenant();
  });

  it('saves a draft with lineage; the same request gives the same SVG; ineligible answers 422 with the reasons', async () => {
    const s = await approvedItem(tenant);
    const res = await generate({ proofItemId: s.proofItemId, format: 'portrait', channel: 'website', excerpt: 'onboarding from 9 days to 2' });
    assert.equal(res.statusCode, 201, res.body);
    const asset = res.json().data;
    assert.deepEqual([asset.assetType, asset.approvalState, asset.sourceProofIds, asset.sourceVersionIds],
      ['quote_card', 'draft', [s.proofItemId], [s.originalVersionId]]);
    assert.deepEqual(asset.channelEligibility, ['website', 'in_app', 'email']);
    assert.ok(asset.content.svg.includes('Ada Lovelace, CTO, Analytical Ltd'));
    const again = await generate({ proofItemId: s.proofItemId, format: 'portrait', channel: 'website', excerpt: 'onboarding from 9 days to 2' });
    assert.equal(again.json().data.content.svg, asset.content.svg);
    assert.notEqual(again.json().data.id, asset.id);
    assert.equal((await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/assets/${asset.id}` }))).json().data.content.sha256,
      asset.content.sha256);

    const paid = await generate({ proofItemId: s.proofItemId, channel: 'paid_ads' });
    assert.equal(paid.statusCode, 422);
    assert.deepEqual(paid.json().error.details, { channel: 'paid_ads', reasons: ['channel_not_consented', 'paid_use_not_allowed'] });
    assert.deepEqual((await generate({ proofItemId: s.proofItemId, excerpt: 'onboarding from 9 days to 1' })).json().error.details.reasons.at(-1),
      'excerpt_not_verbatim');
    assert.deepEqual((await generate({ proofItemId: (await submit(tenant)).proofItemId, channel: 'website' })).json().error.details.reasons, ['not_approved']);
    assert.equal((await generate({ proofItemId: s.proofItemId, theme: { background: 'red' } })).statusCode, 400);
    const other = await createPlacementTenant();
    assert.equal((await call(withKey(other.readKey, { method: 'GET', url: `/api/v1/proof/assets/${asset.id}` }))).statusCode, 404);
    assert.equal(errorCode(await generate({ proofItemId: s.proofItemId }, other.key)), 'NOT_FOUND');

    const removed = await call(asTeammate(tenant.owner, { method: 'DELETE', url: `/api/workspace/proof/items/${s.proofItemId}` }));
    assert.equal(removed.statusCode, 200, removed.body);
    const afterDelete = await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/assets/${asset.id}` }));
    assert.equal(afterDelete.statusCode, 409, 'an asset of a deleted item quotes nothing any more');
  });

  it('serves media of an item in the current eligible manifest only, with byte ranges', async () => {
    const s = await approvedItem(tenant, submissionBody({ content: { text: 'Quote <b>bold</b> & true.', attribution: { name: 'Ada Lovelace' } } }));
    const asset = (await generate({ proofItemId: s.proofItemId, channel: 'website' })).json().data;
    const id = await publishedPlacement(tenant, [s.proofItemId]);
    const renderItem = async () => (await call({ method: 'GET', url: route('/api/public/proof/render/{id}', { id }) })).json().manifest.items[0];
    assert.deepEqual((await renderItem()).media, [], 'a draft asset is never served');
    assert.equal((await media(`/api/public/proof/media/${id}/${asset.id}`)).statusCode, 404);
    const approveUrl = `/api/workspace/proof/assets/${asset.id}/approve`;
    assert.equal(errorCode(await call(withKey(tenant.key, { method: 'POST', url: approveUrl }))), 'HUMAN_APPROVAL_REQUIRED');
    const approved = await call(asTeammate(tenant.owner, { method: 'POST', url: approveUrl }));
    assert.equal(approved.json().data.approvalState, 'approved');
    const item = await renderItem();
    assert.deepEqual(item.media, [{ assetId: asset.id, kind: 'image', url: `/api/public/proof/media/${id}/${asset.id}` }]);
    const url = item.media[0].url;
    const whole = await media(url);
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.headers['content-type'], 'image/svg+xml');
    assert.equal(whole.body, asset.content.svg);
    const size = Buffer.byteLength(whole.body);
    const part = await media(url, { range: 'bytes=0-9' });
    assert.equal(part.statusCode, 206);
    assert.equal(part.headers['content-range'], `bytes 0-9/${size}`);
    assert.equal(part.body, whole.body.slice(0, 10));
    assert.equal((await media(url, { range: 'bytes=-5' })).body, whole.body.slice(-5));
    const beyond = await media(url, { range: `bytes=${size}-` });
    assert.equal(beyond.statusCode, 416);
    assert.equal(beyond.headers['content-range'], `bytes */${size}`);

    const elsewhere = await publishedPlacement(tenant, [(await approvedItem(tenant)).proofItemId]);
    assert.equal((await media(`/api/public/proof/media/${elsewhere}/${asset.id}`)).statusCode, 404, 'not in that manifest');
    assert.equal((await media(`/api/public/proof/media/${id}/ast_unknown0000000000`)).statusCode, 404);
    await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke`, payload: {} }));
    assert.equal((await media(url)).statusCode, 404, 'revoked: no longer in the manifest');
  });
});
