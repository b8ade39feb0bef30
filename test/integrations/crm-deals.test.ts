import assert from 'node:assert/strict';
import { approvedItem } from '../support/proof-fixtures';
import { call, createTenant, errorCode, withKey } from '../support/fixtures';
import { IntegrationTenant, asOwner, createIntegrationTenant, uniqueId } from '../support/integrations';
import { route } from '../support/routes';

describe('integrations: CRM deals and influence', () => {
  let tenant: IntegrationTenant;
  let itemA: string;
  let itemB: string;
  const push = (body: object, key = tenant.key) => call(withKey(key, { method: 'POST', url: '/api/v1/proof/crm/deals', payload: body }));
  const influence = (query = '', key = tenant.readKey) => call(withKey(key, { method: 'GET', url: route('/api/v1/proof/crm/influence', {}, query) }));

  before(async () => {
    tenant = await createIntegrationTenant();
    itemA = (await approvedItem(tenant)).proofItemId;
    itemB = (await approvedItem(tenant)).proofItemId;
  });

  it('upserts generic deals, reports unknown items and skips stale updates', async () => {
    const id = uniqueId('deal');
    const deal = {
      id, name: 'Acme renewal', stage: 'negotiation', status: 'open', amount: 12000, currency: 'usd', closeDate: '2026-03-01',
      accountName: 'Acme', accountDomain: 'acme.test', contacts: [{ personRef: 'cus_1', email: 'a@acme.test' }],
      updatedAt: '2026-02-01T10:00:00Z', proofItemIds: [itemA, 'prf_unknown0000000'],
    };
    const first = await push({ format: 'generic', deals: [deal] });
    assert.equal(first.statusCode, 200, first.body);
    const r = first.json().data;
    assert.deepEqual({ ...r, deals: undefined }, { received: 1, created: 1, updated: 0, unchanged: 0, stale: 0, deals: undefined });
    assert.deepEqual(r.deals[0].unknownProofItemIds, ['prf_unknown0000000']);
    assert.equal(r.deals[0].outcome, 'created');
    assert.equal(r.deals[0].status, 'open');
    const same = (await push({ format: 'generic', deals: [deal] })).json().data;
    assert.equal(same.unchanged, 1);
    const won = (await push({ format: 'generic', deals: [{ ...deal, status: 'won', updatedAt: '2026-02-02T10:00:00Z' }] })).json().data;
    assert.equal(won.updated, 1);
    assert.equal(won.deals[0].dealId, r.deals[0].dealId);
    const stale = (await push({ format: 'generic', deals: [{ ...deal, status: 'lost', updatedAt: '2026-01-15T10:00:00Z' }] })).json().data;
    assert.equal(stale.stale, 1);
    const report = (await influence(`?proofItemId=${itemA}`)).json().data;
    assert.deepEqual(report.items[0].deals, { open: 0, won: 1, lost: 0 });
    assert.deepEqual(report.items[0].wonAmount, [{ currency: 'USD', amount: 12000 }]);
    const extra = await push({ format: 'generic', deals: [{ ...deal, owner: 'x' }] });
    assert.equal(extra.statusCode, 400);
    assert.equal(extra.json().error.details[0].path, 'deals[0].owner');
    assert.equal((await push({ format: 'generic', deals: [] })).statusCode, 400);
    assert.equal((await push({ format: 'generic', deals: [{ ...deal, closeDate: 'March' }] })).statusCode, 400);
  });

  it('reads HubSpot and Salesforce shapes, their statuses and ;-separated proof ids; extra vendor fields are ignored', async () => {
    const hsId = uniqueId('hs');
    const hs = (props: Record<string, string>, updatedAt: string) => ({
      id: hsId, updatedAt, archived: false, createdAt: '2026-01-01T00:00:00Z',
      properties: { dealname: 'Globex', dealstage: 'contractsent', pipeline: 'default', amount: '5000', closedate: '2026-04-01T00:00:00.000Z',
        deal_currency_code: 'EUR', sv_proof_item_ids: `${itemA};${itemB}`, hs_object_id: '1', ...props },
    });
    const h1 = (await push({ format: 'hubspot', deals: [hs({}, '2026-02-01T00:00:00Z')] })).json().data;
    assert.equal(h1.created, 1);
    assert.equal(h1.deals[0].status, 'open');
    const h2 = (await push({ format: 'hubspot', deals: [hs({ dealstage: 'closedwon' }, '2026-02-03T00:00:00Z')] })).json().data;
    assert.equal(h2.updated, 1);
    assert.deepEqual([h2.deals[0].status, h2.deals[0].outcome], ['won', 'updated']);
    const h3 = (await push({ format: 'hubspot', deals: [hs({ hs_is_closed: 'true', dealstage: 'x' }, '2026-02-02T00:00:00Z')] })).json().data;
    assert.equal(h3.stale, 1);
    assert.deepEqual([h3.deals[0].status, h3.deals[0].outcome], ['won', 'stale'], 'a stale entry answers the stored status');

    const sfId = uniqueId('006');
    const sf = { Id: sfId, Name: 'Initech', StageName: 'Prospecting', Amount: 700, CloseDate: '2026-05-01', IsClosed: false, IsWon: false,
      CurrencyIsoCode: 'USD', AccountId: '001x', LastModifiedDate: '2026-02-01T00:00:00.000+0000', SV_Proof_Item_Ids__c: itemB,
      attributes: { type: 'Opportunity' } };
    assert.equal((await push({ format: 'salesforce', deals: [sf] })).json().data.created, 1);
    const lost = await push({ format: 'salesforce', deals: [{ ...sf, IsClosed: true, LastModifiedDate: '2026-02-05T00:00:00.000Z' }] });
    assert.equal(lost.json().data.updated, 1);
    assert.equal(lost.json().data.deals[0].status, 'lost');
    const stale = await push({ format: 'salesforce', deals: [{ ...sf, IsWon: true, IsClosed: true, LastModifiedDate: '2026-02-04T00:00:00.000Z' }] });
    assert.equal(stale.json().data.stale, 1);
    // The same external id in another format is another deal.
    assert.equal((await push({ format: 'generic', deals: [{ id: sfId }] })).json().data.created, 1);

    const report = (await influence(`?proofItemId=${itemB}`)).json().data;
    assert.deepEqual(report.items[0].deals, { open: 0, won: 1, lost: 1 });
    assert.deepEqual(report.items[0].wonAmount, [{ currency: 'EUR', amount: 5000 }]);
    const missingId = await push({ format: 'salesforce', deals: [{ Name: 'x' }] });
    assert.equal(missingId.json().error.details[0].path, 'deals[0].Id');
  });

  it('writes a batch in input order, the same id twice meeting its earlier entry, and nulls a field a later push leaves out', async () => {
    const id = uniqueId('deal');
    const fresh = uniqueId('deal');
    const first = (await push({ format: 'generic', deals: [
      { id, stage: 'a', updatedAt: '2026-02-01T00:00:00Z' },
      { id: fresh },
      { id, stage: 'b', updatedAt: '2026-02-02T00:00:00Z' },
      { id, stage: 'old', updatedAt: '2026-01-01T00:00:00Z' },
      { id, stage: 'b', updatedAt: '2026-02-02T00:00:00Z' },
    ] })).json().data;
    assert.deepEqual(first.deals.map((d: { outcome: string }) => d.outcome), ['created', 'created', 'updated', 'stale', 'unchanged']);
    assert.deepEqual(first.deals.map((d: { status: string }) => d.status), ['open', 'open', 'open', 'open', 'open'], 'each entry carries the deal\'s status');
    assert.deepEqual({ ...first, deals: undefined }, { received: 5, created: 2, updated: 1, unchanged: 1, stale: 1, deals: undefined });
    assert.equal(new Set(first.deals.map((d: { dealId: string }) => d.dealId)).size, 2);
    const cleared = (await push({ format: 'generic', deals: [{ id, updatedAt: '2026-02-02T00:00:00Z' }] })).json().data;
    assert.equal(cleared.deals[0].outcome, 'updated', 'a stage left out is a change to null');
    assert.equal(cleared.deals[0].dealId, first.deals[0].dealId);
  });

  it('leaves revoked items out of the influence report', async () => {
    const item = (await approvedItem(tenant)).proofItemId;
    await push({ format: 'generic', deals: [{ id: uniqueId('deal'), status: 'won', amount: 100, currency: 'GBP', proofItemIds: [item] }] });
    assert.equal((await influence(`?proofItemId=${item}`)).json().data.items.length, 1);
    const filed = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${item}/revoke` }));
    assert.equal(filed.statusCode, 202, filed.body);
    const done = await asOwner(tenant, 'POST', `/api/workspace/proof/revocations/${filed.json().data.revocation.id}/complete`);
    assert.equal(done.statusCode, 200, done.body);
    assert.equal((await influence(`?proofItemId=${item}`)).json().data.items.length, 0);
    const all = (await influence('?status=won&since=2000-01-01')).json().data;
    assert.ok(!all.items.some((i: { proofItemId: string }) => i.proofItemId === item));
  });

  it('keeps deals to their product and needs the scopes', async () => {
    const other = await createTenant(['service:proof:read', 'service:proof:write']);
    const res = await push({ format: 'generic', deals: [{ id: uniqueId('deal'), proofItemIds: [itemA] }] }, other.key);
    assert.deepEqual(res.json().data.deals[0].unknownProofItemIds, [itemA]);
    assert.equal((await influence('', other.key)).json().data.items.length, 0);
    assert.equal(errorCode(await push({ format: 'generic', deals: [{ id: 'x' }] }, tenant.readKey)), 'INSUFFICIENT_SCOPE');
    assert.equal((await influence('?bogus=1')).statusCode, 400);
  });
});
