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

  it('a verified collection domain serves the same pages at its root; an unverified or unknown host does not', async () => {
    const hostname = `stories-${t.publicId.slice(3, 11).toLowerCase()}.example.test`;
    await ctx.dataSource.query(
      `INSERT INTO collection_domains (id, organization_id, flow_id, hostname, status, verification_token, verified_at)
       VALUES ($1, $2, $3, $4, 'verified', 'token', now())`, [`cdm_${t.publicId.slice(3)}`, t.organizationId, t.flowId, hostname]);
    const at = (url: string, host: string) => ctx.app.inject({ method: 'GET', url, headers: { host } });
    for (const url of ['/', `/f/${t.publicId}`]) {
      const res = await at(url, hostname);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      assert.ok(res.body.includes(WORDING), `${url}: the flow's form`);
      assert.ok(res.body.includes('"base":""'), `${url}: the pages' links stay at the root`);
    }
    const other = await createCollectionTenant();
    assert.equal((await at(`/f/${other.publicId}`, hostname)).statusCode, 404, 'another workspace\'s flow never answers under this domain');
    const control = await at('/control', hostname);
    assert.equal(control.statusCode, 200);
    assert.equal(control.headers['referrer-policy'], 'no-referrer');
    assert.ok(control.body.includes('action="/control"'), 'the paste form posts to the root page');
    for (const url of ['/', `/f/${t.publicId}`, '/control']) assert.equal((await at(url, 'unverified.example.test')).statusCode, 404, url);
    await ctx.dataSource.query(`UPDATE collection_domains SET status = 'failed' WHERE hostname = $1`, [hostname]);
    assert.equal((await at('/', hostname)).statusCode, 404, 'a failed claim serves nothing');
  });

  it('page routes: the live page is the pinned version with its consent wording; fragment pages are shells that handle secrets; codes never in a URL',
    async () => {
      const live = await ctx.app.inject({ method: 'GET', url: `/collect/f/${t.publicId}` });
      assert.equal(live.statusCode, 200);
      assert.match(live.headers['content-type'] as string, /text\/html/);
      assert.doesNotMatch(live.headers['content-security-policy'] as string, /unsafe-inline|unsafe-eval/);
      assert.ok(live.body.includes('action="/api/proof/collect/nojs"'), 'without JavaScript it posts to the no-JS route');
      assert.ok(live.body.includes(`name="flowVersion" value="${t.flowVersionId}"`));
      assert.ok(!/<script(?![^>]*(type="module" src="\/assets\/|type="application\/json"))/.test(live.body), 'no inline script');
      assert.ok(!/ style="/.test(live.body), 'no inline style');
      const unknown = await ctx.app.inject({ method: 'GET', url: '/collect/f/fp_doesnotexist000000' });
      assert.equal(unknown.statusCode, 404);
      assert.match(unknown.body, /does not exist/);
      for (const name of ['r', 'continue', 'control', 'review', 'interview', 'opt-out']) {
        const res = await ctx.app.inject({ method: 'GET', url: `/collect/${name}` });
        assert.equal(res.statusCode, 200, name);
        assert.equal(res.headers['referrer-policy'], 'no-referrer', name);
        assert.equal(res.headers['cache-control'], 'no-store', name);
        assert.ok(res.body.includes(`<form method="post" action="/collect/${name}"`), `${name}: a POST form to paste the code`);
      }
      const leaked = await ctx.app.inject({ method: 'GET', url: `/collect/control?code=ct_${'a'.repeat(43)}` });
      assert.equal(leaked.statusCode, 400, 'a code in a query string is refused');
      const wrongKind = await ctx.app.inject({
        method: 'POST', url: '/collect/control', payload: `code=pr_${'a'.repeat(43)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(wrongKind.statusCode, 400, 'a code of another kind is refused before the API is called');
      const notOurs = await ctx.app.inject({
        method: 'POST', url: '/collect/control', payload: `code=ct_${'a'.repeat(43)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.equal(notOurs.statusCode, 401);
      assert.match(notOurs.body, /not recognised/);
    });
});
