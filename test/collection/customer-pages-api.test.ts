import assert from 'node:assert/strict';
import { ctx } from '../support/root-hooks';
import { CollectionTenant, WORDING, createCollectionTenant, customerCall, startDraft } from '../support/collection';

describe('customer pages: the API they stand on', () => {
  let t: CollectionTenant;
  before(async () => {
    t = await createCollectionTenant();
  });

  it('GET /api/proof/collect/flows/{publicId} answers the live version\'s public view, cacheable, and creates nothing', async () => {
    const count = async () => (await ctx.dataSource.query(`SELECT count(*)::int AS n FROM collection_drafts WHERE flow_id = $1`, [t.flowId]))[0].n as number;
    const before = await count();
    const res = await customerCall({ method: 'GET', url: `/api/proof/collect/flows/${t.publicId}` });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.headers['cache-control'] as string, /^public, max-age=\d+$/);
    const flow = res.json().data;
    assert.equal(flow.id, t.publicId);
    assert.equal(flow.flowVersionId, t.flowVersionId);
    assert.equal(flow.wording, WORDING);
    assert.equal(flow.wordingHash, t.wordingHash);
    assert.equal(flow.questions[0].questionId, t.questionId);
    assert.equal(await count(), before, 'no draft was opened');
    const draft = await startDraft(t);
    assert.deepEqual(draft.body.flow, flow, 'the same flow object as a draft answers');
  });

  it('an unknown flow is 404, a paused one 409, in the {error, code} envelope', async () => {
    const unknown = await customerCall({ method: 'GET', url: '/api/proof/collect/flows/fp_doesnotexist000000' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'NOT_FOUND');
    const other = await createCollectionTenant();
    await ctx.dataSource.query(`UPDATE collection_flows SET state = 'paused' WHERE id = $1`, [other.flowId]);
    const paused = await customerCall({ method: 'GET', url: `/api/proof/collect/flows/${other.publicId}` });
    assert.equal(paused.statusCode, 409);
    assert.equal(paused.json().code, 'CONFLICT');
  });

  it('the OpenAPI document names the server this app answers at, and lists getLiveFlow', async () => {
    const app = await ctx.buildApp({ publicBaseUrl: 'http://127.0.0.1:4555' });
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    assert.equal(doc.servers[0].url, 'http://127.0.0.1:4555');
    assert.equal(doc.paths['/api/proof/collect/flows/{publicId}'].get.operationId, 'getLiveFlow');
  });
});
