import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { ctx } from '../support/root-hooks';
import { CollectionTenant, asDraft, createCollectionTenant, customerCall, startDraft } from '../support/collection';

const preflight = (url: string, origin: string, method = 'PATCH', headers = 'content-type,x-draft-session') => customerCall({
  method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
});

describe('collection: CORS on the customer routes only', () => {
  let t: CollectionTenant;
  let pageOrigin: string;
  before(async () => {
    t = await createCollectionTenant();
    pageOrigin = new URL(ctx.config.collectPageUrl).origin;
  });

  it('answers a preflight from the collection page with the customer headers and never credentials', async () => {
    const d = await startDraft(t);
    const res = await preflight(`/api/proof/collect/drafts/${d.id}`, pageOrigin);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.headers['access-control-allow-origin'], pageOrigin);
    assert.match(String(res.headers['access-control-allow-methods']), /PATCH/);
    assert.match(String(res.headers['access-control-allow-headers']), /x-draft-session/);
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    assert.match(String(res.headers.vary), /Origin/i);

    const patched = await customerCall(asDraft(d, {
      method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`, payload: { title: 'Hello' }, headers: { origin: pageOrigin },
    }));
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(patched.headers['access-control-allow-origin'], pageOrigin);
    assert.match(String(patched.headers['access-control-expose-headers']), /x-ratelimit-remaining/);
    assert.equal(patched.headers['access-control-allow-credentials'], undefined);
  });

  it('allows a live flow\'s allowedOrigins and a verified domain; refuses any other origin\'s preflight with 403', async () => {
    const d = await startDraft(t);
    const url = `/api/proof/collect/drafts/${d.id}`;
    const flowOrigin = `https://app-${randomBytes(4).toString('hex')}.example.com`;
    const host = `stories-${randomBytes(4).toString('hex')}.example.org`;

    const refused = await preflight(url, flowOrigin);
    assert.equal(refused.statusCode, 403, refused.body);
    assert.deepEqual(refused.json(), { error: refused.json().error, code: 'FORBIDDEN' });
    assert.equal(refused.headers['access-control-allow-origin'], undefined);
    const simple = await customerCall(asDraft(d, { method: 'GET', url, headers: { origin: flowOrigin } }));
    assert.equal(simple.statusCode, 200);
    assert.equal(simple.headers['access-control-allow-origin'], undefined, 'no CORS headers for an origin not allowed');

    await ctx.dataSource.query(
      `UPDATE collection_flow_versions SET definition = definition || jsonb_build_object('allowedOrigins', jsonb_build_array($2::text)) WHERE id = $1`,
      [t.flowVersionId, flowOrigin]);
    const allowed = await preflight(url, flowOrigin);
    assert.equal(allowed.statusCode, 204, allowed.body);
    assert.equal(allowed.headers['access-control-allow-origin'], flowOrigin);

    assert.equal((await preflight(url, `https://${host}`)).statusCode, 403, 'a pending domain is not allowed');
    await ctx.dataSource.query(
      `INSERT INTO collection_domains (id, organization_id, flow_id, hostname, status, verification_token) VALUES ($1, $2, $3, $4, 'pending_verification', 'tok')`,
      [`dom_${randomBytes(8).toString('hex')}`, t.organizationId, t.flowId, host]);
    assert.equal((await preflight(url, `https://${host}`)).statusCode, 403, 'a pending domain is not allowed');
    await ctx.dataSource.query(`UPDATE collection_domains SET status = 'verified', verified_at = now() WHERE hostname = $1`, [host]);
    const verified = await preflight(url, `https://${host}`);
    assert.equal(verified.statusCode, 204, verified.body);
    assert.equal(verified.headers['access-control-allow-origin'], `https://${host}`);

    // A paused flow's origins lose their pass.
    await ctx.dataSource.query(`UPDATE collection_flows SET state = 'paused' WHERE id = $1`, [t.flowId]);
    try {
      assert.equal((await preflight(url, flowOrigin)).statusCode, 403);
    } finally {
      await ctx.dataSource.query(`UPDATE collection_flows SET state = 'live' WHERE id = $1`, [t.flowId]);
    }
  });

  it('sends no CORS headers outside the customer routes', async () => {
    const res = await customerCall({ method: 'GET', url: '/api/v1/whoami', headers: { origin: pageOrigin } });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const pre = await preflight('/api/v1/proof/items', pageOrigin, 'POST', 'authorization');
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.equal(pre.statusCode, 404);
  });
});
