import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { eventually } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { CollectionTenant, asDraft, createCollectionTenant, customerCall, startDraft } from '../support/collection';

const preflight = (url: string, origin: string, method = 'PATCH', headers = 'content-type,x-draft-session', app?: FastifyInstance) => customerCall({
  method: 'OPTIONS', url, headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
}, app);

/**
 * A preflight's answer once it is `status`: a change to the allowed origins must show within the cache's
 * bound (PROOF_CORS_CACHE_MS) plus one query, given 2 s here for a loaded machine.
 */
const settles = (url: string, origin: string, status: number) => eventually(async () => {
  const res = await preflight(url, origin);
  return res.statusCode === status ? res : null;
}, ctx.config.customerOriginsCacheMs + 2_000);

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
    const allowed = await settles(url, flowOrigin, 204);
    assert.equal(allowed.headers['access-control-allow-origin'], flowOrigin);

    assert.equal((await preflight(url, `https://${host}`)).statusCode, 403, 'a pending domain is not allowed');
    await ctx.dataSource.query(
      `INSERT INTO collection_domains (id, organization_id, flow_id, hostname, status, verification_token) VALUES ($1, $2, $3, $4, 'pending_verification', 'tok')`,
      [`dom_${randomBytes(8).toString('hex')}`, t.organizationId, t.flowId, host]);
    assert.equal((await preflight(url, `https://${host}`)).statusCode, 403, 'a pending domain is not allowed');
    await ctx.dataSource.query(`UPDATE collection_domains SET status = 'verified', verified_at = now() WHERE hostname = $1`, [host]);
    const verified = await settles(url, `https://${host}`, 204);
    assert.equal(verified.headers['access-control-allow-origin'], `https://${host}`);

    // A paused flow's origins lose their pass.
    await ctx.dataSource.query(`UPDATE collection_flows SET state = 'paused' WHERE id = $1`, [t.flowId]);
    try {
      await settles(url, flowOrigin, 403);
    } finally {
      await ctx.dataSource.query(`UPDATE collection_flows SET state = 'live' WHERE id = $1`, [t.flowId]);
    }
  });

  it('keeps the allowed origins per process for the configured time, so a change shows within that bound and not before', async () => {
    const d = await startDraft(t);
    const url = `/api/proof/collect/drafts/${d.id}`;
    const host = `cached-${randomBytes(4).toString('hex')}.example.org`;
    const domainId = `dom_${randomBytes(8).toString('hex')}`;
    await ctx.dataSource.query(
      `INSERT INTO collection_domains (id, organization_id, flow_id, hostname, status, verification_token, verified_at) VALUES ($1, $2, $3, $4, 'verified', 'tok', now())`,
      [domainId, t.organizationId, t.flowId, host]);
    // Closed by the suite's teardown, like every app it builds.
    const slow = await ctx.buildApp({ customerOriginsCacheMs: 600_000 });
    assert.equal((await preflight(url, `https://${host}`, 'PATCH', 'content-type', slow)).statusCode, 204);
    await ctx.dataSource.query(`DELETE FROM collection_domains WHERE id = $1`, [domainId]);
    // The process that read the domain keeps it for its bound; it asks the database no more per request.
    assert.equal((await preflight(url, `https://${host}`, 'PATCH', 'content-type', slow)).statusCode, 204);
    assert.equal((await preflight(url, `https://${host.toUpperCase()}`, 'PATCH', 'content-type', slow)).statusCode, 204, 'a domain matches in any case');
    await settles(url, `https://${host}`, 403);
  });

  it('sends no CORS headers outside the customer routes', async () => {
    const res = await customerCall({ method: 'GET', url: '/api/v1/whoami', headers: { origin: pageOrigin } });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    const pre = await preflight('/api/v1/proof/items', pageOrigin, 'POST', 'authorization');
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    assert.equal(pre.statusCode, 404);
  });
});
