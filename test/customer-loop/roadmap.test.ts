import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseFeed } from '@rowanmanning/feed-parser';
import { FastifyInstance } from 'fastify';
import { Browser } from 'playwright-core';
import { WEB_DIST } from '../../web/manifest';
import { CollectionTenant, createCollectionTenant } from '../support/collection';
import { keyFor, teammate } from '../support/customer-loop';
import { call, createTenant, endUserToken, eventually, listenOnLoopback, withKey } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { PHONE, collectPageErrors, ensureChromium, launchChromium, seriousViolations } from '../support/browser';

const ROADMAP_BUDGET_BYTES = 15 * 1024;

describe('customer loop: the public roadmap, its changelog and the loop closing (real Chromium)', function () {
  this.timeout(180_000);
  let t: CollectionTenant;
  let loopKey: string;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  const features: Record<string, { id: string }> = {};

  const token = (sub: string) => endUserToken(t.product, { sub, exp: Math.floor(Date.now() / 1000) + 600 });
  const createFeature = async (title: string, extra: Record<string, unknown>) => {
    const res = await call(teammate(t.owner, 'POST', '/api/workspace/features',
      { productId: t.product.id, title, problem: `${title}: the problem`, ...extra }));
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data as { id: string };
  };
  const board = async () => (await call({ method: 'GET', url: `/api/public/roadmap/${t.product.id}` })).json().data;
  const votesOf = async (id: string) => (await board()).features.find((f: { id: string }) => f.id === id)?.voteCount;

  before(async function () {
    if (ensureChromium()) this.skip();
    t = await createCollectionTenant();
    loopKey = await keyFor(t, ['service:signals:write', 'service:features:write', 'service:features:read', 'service:inbox:read']);
    features.export = await createFeature('Faster export', { publicBoard: true, state: 'building' });
    features.sso = await createFeature('Single sign-on', { publicBoard: true, state: 'planned' });
    features.secret = await createFeature('Acquisition integration', { publicBoard: false });
    // End users on record: three with an e-mail (from their signals), one without.
    for (const [endUserId, email] of [['u-ada', 'ada@example.com'], ['u-bob', 'bob@example.com'], ['u-dee', 'dee@example.com'], ['u-cy', undefined]]) {
      const res = await call(withKey(loopKey, {
        method: 'POST', url: '/api/v1/signals',
        payload: { endUserId, ...(email ? { email, name: endUserId } : {}), title: 'Export', body: 'Exports are slow.',
          idempotencyKey: `roadmap-${endUserId}-${t.product.id}` },
      }));
      assert.equal(res.statusCode, 201, res.body);
    }
    for (const endUserId of ['u-bob', 'u-dee']) {
      const res = await call(withKey(loopKey, { method: 'POST', url: `/api/v1/features/${features.export.id}/votes`, payload: { endUserId } }));
      assert.equal(res.statusCode, 200, res.body);
    }
    app = await ctx.buildApp();
    base = await listenOnLoopback(app);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  it('the public API shows public features with counts only; votes and follows need the product\'s end-user token', async () => {
    const roadmap = await board();
    assert.deepEqual(roadmap.product, { id: t.product.id, name: t.product.name });
    assert.deepEqual(roadmap.features.map((f: { id: string }) => f.id).sort(), [features.export.id, features.sso.id].sort());
    assert.deepEqual(Object.keys(roadmap.features[0]).sort(), ['id', 'problem', 'releases', 'state', 'title', 'voteCount']);
    assert.ok(!JSON.stringify(roadmap).includes('u-bob'), 'never who voted');
    const url = (f: string, what = 'vote') => `/api/public/roadmap/${t.product.id}/features/${f}/${what}`;
    const as = (tok: string, method: 'PUT' | 'DELETE', u: string) => call({ method, url: u, headers: { authorization: `Bearer ${tok}` } });
    assert.equal((await call({ method: 'PUT', url: url(features.sso.id) })).statusCode, 401);
    const hidden = await as(token('u-eve'), 'PUT', url(features.secret.id));
    assert.equal(hidden.statusCode, 404, hidden.body);
    const other = await createTenant();
    assert.equal((await as(endUserToken(other.product, { sub: 'u-eve' }), 'PUT', url(features.sso.id))).statusCode, 404, 'another product\'s token');
    const once = token('u-eve');
    const voted = await as(once, 'PUT', url(features.sso.id));
    assert.equal(voted.statusCode, 200, voted.body);
    assert.deepEqual(voted.json().data, { featureId: features.sso.id, voted: true, following: true, voteCount: 1 });
    assert.equal((await as(once, 'PUT', url(features.sso.id))).statusCode, 401, 'a token acts once');
    assert.deepEqual((await as(token('u-eve'), 'DELETE', url(features.sso.id))).json().data,
      { featureId: features.sso.id, voted: false, following: true, voteCount: 0 });
    assert.deepEqual((await as(token('u-eve'), 'DELETE', url(features.sso.id, 'follow'))).json().data.following, false);
    const me = await call({ method: 'GET', url: `/api/public/roadmap/${t.product.id}/me`, headers: { authorization: `Bearer ${token('u-dee')}` } });
    assert.deepEqual(me.json().data, { endUserId: 'u-dee', votedFeatureIds: [features.export.id], followedFeatureIds: [features.export.id] });
    assert.equal((await call({ method: 'GET', url: '/api/public/roadmap/prd_unknown' })).statusCode, 404);
  });

  it('the board reads without JavaScript; with a token in the fragment a vote moves the count; the opener hands fresh tokens by postMessage', async () => {
    const built = JSON.parse(fs.readFileSync(path.join(WEB_DIST, 'manifest.json'), 'utf8')) as Record<string, string>;
    const gzipped = zlib.gzipSync(fs.readFileSync(path.join(WEB_DIST, built['roadmap.js']))).length;
    console.log(`      roadmap script: ${gzipped} bytes gzip`);
    assert.ok(gzipped < ROADMAP_BUDGET_BYTES);

    const plain = await browser.newContext({ ...PHONE, javaScriptEnabled: false });
    const reader = await plain.newPage();
    const response = await reader.goto(`${base}/roadmap/${t.product.id}`);
    assert.equal(response?.headers()['referrer-policy'], 'no-referrer');
    assert.match(await reader.textContent('#state-building') ?? '', /Building now/);
    assert.match(await reader.textContent(`[data-count="${features.export.id}"]`) ?? '', /^2 votes$/);
    assert.ok(!(await reader.content()).includes('Acquisition integration'), 'only public features');
    assert.equal(await reader.locator('.rm-actions').first().isVisible(), false, 'no buttons without a token and a script');
    await plain.close();

    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(`${base}/roadmap/${t.product.id}#token=${token('u-ada')}`);
    const vote = page.locator(`button[data-action="vote"][data-feature="${features.export.id}"]`);
    await vote.waitFor({ state: 'visible' });
    assert.equal(new URL(page.url()).hash, '', 'the token leaves the address bar');
    assert.equal(await vote.getAttribute('aria-pressed'), 'false');
    await vote.click();
    await eventually(async () => (await vote.getAttribute('aria-pressed')) === 'true');
    assert.equal(await page.textContent(`[data-count="${features.export.id}"]`), '3 votes');
    assert.equal(await votesOf(features.export.id), 3);
    assert.deepEqual(errors, []);
    assert.deepEqual(await seriousViolations(page), []);
    await page.screenshot({ path: 'docs/screenshots/roadmap.png' });
    // The fragment's token is spent; without an opener to ask there is no second vote.
    await page.locator(`button[data-action="follow"][data-feature="${features.sso.id}"]`).click();
    await eventually(async () => /open the roadmap again/.test(await page.textContent('#rm-status') ?? ''));
    await context.close();

    // A product page on another origin opens the roadmap and answers each token request with a fresh token.
    const tokens = [token('u-cy'), token('u-cy'), token('u-cy')];
    const product = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html lang="en"><title>Product</title><body><script>
const tokens = ${JSON.stringify(tokens)};
window.addEventListener('message', (e) => { if (e.data && e.data.type === 'sv-roadmap:token-request') e.source.postMessage({ type: 'sv-roadmap:token', token: tokens.shift() }, '${base}'); });
</script><button id="open">Roadmap</button><script>document.getElementById('open').onclick = () => window.open('${base}/roadmap/${t.product.id}');</script></body></html>`);
    });
    await new Promise<void>((resolve) => product.listen(0, '127.0.0.1', resolve));
    try {
      const opener = await browser.newPage();
      await opener.goto(`http://127.0.0.1:${(product.address() as AddressInfo).port}/`);
      const [roadmap] = await Promise.all([opener.context().waitForEvent('page'), opener.click('#open')]);
      const follow = roadmap.locator(`button[data-action="follow"][data-feature="${features.export.id}"]`);
      await follow.waitFor({ state: 'visible' });
      await follow.click();
      await eventually(async () => (await follow.getAttribute('aria-pressed')) === 'true');
      const voteSso = roadmap.locator(`button[data-action="vote"][data-feature="${features.sso.id}"]`);
      await voteSso.click();
      await eventually(async () => (await voteSso.getAttribute('aria-pressed')) === 'true');
      assert.equal(await votesOf(features.sso.id), 1);
      await opener.context().close();
    } finally {
      await new Promise<void>((resolve) => product.close(() => resolve()));
    }
  });

  it('shipping a release: an inbox item for each voter and follower, a draft personal request where the rules allow; the changelog and its Atom feed',
    async () => {
    // u-bob opted out of story requests; u-dee was sent one last week (cooldown); u-cy has no e-mail.
      await ctx.dataSource.query(
      `INSERT INTO collection_suppressions (organization_id, product_id, recipient_key, via) VALUES ($1, $2, 'email:bob@example.com', 'opt_out')`,
      [t.organizationId, t.product.id]);
      await ctx.dataSource.query(
      `INSERT INTO proof_requests (id, organization_id, product_id, flow_id, flow_version_id, channel, recipient, recipient_id, expires_in_days,
         status, sent_at, created_by, updated_at)
       VALUES ('prq_cooldown' || substr(md5(random()::text), 1, 12), $1, $2, $3, $4, 'email', '{"email": "dee@example.com", "endUserId": "u-dee"}', 'u-dee', 30,
         'sent', now() - interval '7 days', '{"type": "teammate", "id": null}', now())`,
      [t.organizationId, t.product.id, t.flowId, t.flowVersionId]);
      const publish = (title: string) => call(teammate(t.owner, 'POST', '/api/workspace/releases',
        { productId: t.product.id, title, featureIds: [features.export.id] }));
      const res = await publish('November release');
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().data.recipientCount, 4);
      for (const endUserId of ['u-ada', 'u-bob', 'u-cy', 'u-dee']) {
        const inbox = await call(withKey(loopKey, { method: 'GET', url: `/api/v1/inbox?endUserId=${endUserId}` }));
        assert.equal(inbox.statusCode, 200, inbox.body);
        assert.ok(inbox.json().data.items.some((i: { releaseId: string }) => i.releaseId === res.json().data.id), endUserId);
      }
      const drafts = async () => ctx.dataSource.query(
      `SELECT recipient, status, channel, message, created_by FROM proof_requests WHERE product_id = $1 AND status = 'draft'`, [t.product.id]);
      const made = await drafts();
      assert.equal(made.length, 1, JSON.stringify(made));
      assert.deepEqual(made[0].recipient, { email: 'ada@example.com', endUserId: 'u-ada', name: 'u-ada' });
      assert.equal(made[0].channel, 'email');
      assert.match(made[0].message, /Faster export/);
      assert.deepEqual(made[0].created_by, { type: 'release', id: res.json().data.id });
      // Never sent without a person; shipping again does not pile up a second draft.
      assert.equal((await publish('November release, again')).statusCode, 201);
      assert.equal((await drafts()).length, 1);

      const page = await browser.newPage({ ...PHONE });
      await page.goto(`${base}/roadmap/${t.product.id}/changelog`);
      assert.match(await page.textContent(`[id="${res.json().data.id}"]`) ?? '', /November release[\s\S]*Faster export/);
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: 'docs/screenshots/changelog.png' });
      await page.goto(`${base}/roadmap/${t.product.id}`);
      assert.match(await page.textContent('section[aria-labelledby="state-released"]') ?? '', /Faster export[\s\S]*Shipped in November release/);
      await page.close();

      const atom = await fetch(`${base}/roadmap/${t.product.id}/changelog.atom`);
      assert.match(atom.headers.get('content-type')!, /^application\/atom\+xml/);
      const feed = parseFeed(await atom.text());
      assert.equal(feed.meta.type, 'atom');
      assert.equal(feed.title, `${t.product.name}: what shipped`);
      assert.deepEqual(feed.items.map((i) => i.title), ['November release, again', 'November release']);
      assert.match(feed.items[1].content ?? '', /Faster export/);
      assert.match(feed.items[1].url ?? '', new RegExp(`/roadmap/${t.product.id}/changelog#rel_`));
      assert.equal((await fetch(`${base}/roadmap/prd_unknown/changelog.atom`)).status, 404);
    });

  it('a merged feature leaves the board and its address answers 301 to the survivor\'s; an unmerge takes the redirect back', async () => {
    const dark = await createFeature('Dark mode', { publicBoard: true, state: 'planned' });
    const night = await createFeature('Night theme', { publicBoard: true, state: 'planned' });
    const sepia = await createFeature('Sepia theme', { publicBoard: true, state: 'planned' });
    const engine = await createFeature('Theme engine rewrite', { publicBoard: false });
    const boardUrl = `/roadmap/${t.product.id}`;
    const at = (productId: string, featureId: string) => `/roadmap/${productId}?feature=${featureId}`;
    const read = (featureId: string, productId = t.product.id) => call({ method: 'GET', url: `/api/public/roadmap/${productId}/features/${featureId}` });
    const voteAs = (sub: string, featureId: string) => call({
      method: 'PUT', url: `/api/public/roadmap/${t.product.id}/features/${featureId}/vote`, headers: { authorization: `Bearer ${token(sub)}` } });
    const merge = (from: string, into: string) => call(teammate(t.owner, 'POST', `/api/workspace/features/${from}/merge`, { intoFeatureId: into }));
    assert.equal((await voteAs('u-fay', dark.id)).statusCode, 200);
    const shipped = await call(teammate(t.owner, 'POST', '/api/workspace/releases',
      { productId: t.product.id, title: 'Theme preview', featureIds: [dark.id] }));
    assert.equal(shipped.statusCode, 201, shipped.body);
    assert.equal((await read(dark.id)).json().data.mergedFrom, null);

    assert.equal((await merge(dark.id, night.id)).statusCode, 200);
    const roadmap = await board();
    assert.ok(!JSON.stringify(roadmap).includes(dark.id), 'the merged feature is nowhere on the board, nor in a release');
    const survivor = roadmap.features.find((f: { id: string }) => f.id === night.id);
    assert.equal(survivor.voteCount, 1, 'its vote moved');
    assert.deepEqual(survivor.releases.map((r: { title: string }) => r.title), ['Theme preview'], 'its release is the survivor\'s');
    assert.deepEqual(roadmap.releases.find((r: { id: string }) => r.id === shipped.json().data.id).features.map((f: { id: string }) => f.id), [night.id]);
    const boardHtml = await (await fetch(`${base}${boardUrl}`)).text();
    assert.ok(boardHtml.includes(`id="feature-${night.id}"`) && !boardHtml.includes(dark.id) && !boardHtml.includes('Dark mode'));

    const redirect = await fetch(`${base}${at(t.product.id, dark.id)}`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), at(t.product.id, night.id));
    assert.equal(redirect.headers.get('cache-control'), 'no-store', 'an unmerge must be able to take it back');
    const landed = await fetch(`${base}${redirect.headers.get('location')}`, { redirect: 'manual' });
    assert.equal(landed.status, 200);
    assert.match(await landed.text(), new RegExp(`id="feature-${night.id}" data-feature="${night.id}" aria-current="true"`));
    const api = await read(dark.id);
    assert.equal(api.statusCode, 200, api.body);
    assert.deepEqual({ id: api.json().data.id, title: api.json().data.title, voteCount: api.json().data.voteCount, mergedFrom: api.json().data.mergedFrom },
      { id: night.id, title: 'Night theme', voteCount: 1, mergedFrom: dark.id });
    const voted = await voteAs('u-gus', dark.id);
    assert.deepEqual(voted.json().data, { featureId: night.id, voted: true, following: true, voteCount: 2 }, 'a vote on the old id counts on the survivor');

    // In a browser: the redirect keeps the fragment's token, lands on the survivor, and the page passes axe.
    const page = await browser.newPage({ ...PHONE });
    const errors = collectPageErrors(page);
    const response = await page.goto(`${base}${at(t.product.id, dark.id)}#token=${token('u-hal')}`);
    assert.equal(response?.request().redirectedFrom()?.url(), `${base}${at(t.product.id, dark.id)}`);
    assert.equal(new URL(page.url()).searchParams.get('feature'), night.id);
    const vote = page.locator(`button[data-action="vote"][data-feature="${night.id}"]`);
    await vote.waitFor({ state: 'visible' });
    assert.ok(await page.locator(`#feature-${night.id}`).isVisible());
    assert.deepEqual(errors, []);
    assert.deepEqual(await seriousViolations(page), []);
    await page.close();

    // Nothing public to point at: a private feature, one merged into a private one, another product's, a bad id.
    assert.equal((await merge(sepia.id, engine.id)).statusCode, 200);
    const other = await createTenant();
    const foreign = await call(teammate(other.owner, 'POST', '/api/workspace/features',
      { productId: other.product.id, title: 'Dark mode', problem: 'Too bright.', publicBoard: true }));
    assert.equal(foreign.statusCode, 201, foreign.body);
    for (const [productId, featureId] of [[t.product.id, engine.id], [t.product.id, sepia.id], [t.product.id, foreign.json().data.id],
      [other.product.id, night.id], [other.product.id, dark.id], [t.product.id, 'feat_unknown']]) {
      const missing = await fetch(`${base}${at(productId, featureId)}`, { redirect: 'manual' });
      assert.equal(missing.status, 404, `${productId} ${featureId}`);
      assert.match(await missing.text(), /This feature is not on the public roadmap/);
      assert.equal((await read(featureId, productId)).statusCode, 404, `${productId} ${featureId}`);
    }
    assert.equal((await voteAs('u-gus', sepia.id)).statusCode, 404, 'no vote lands on a private survivor');
    const missingPage = await browser.newPage({ ...PHONE });
    const missingErrors = collectPageErrors(missingPage);
    assert.equal((await missingPage.goto(`${base}${at(t.product.id, engine.id)}`))?.status(), 404);
    assert.ok(await missingPage.locator('a[href]').first().isVisible(), 'the not-found page links back to the board');
    assert.deepEqual(missingErrors.filter((e) => !/Failed to load resource/.test(e)), []);
    assert.deepEqual(await seriousViolations(missingPage), [], 'the not-found page passes axe');
    await missingPage.close();
    assert.equal((await fetch(`${base}${boardUrl}?feature=a&feature=b`, { redirect: 'manual' })).status, 404);

    assert.equal((await call(teammate(t.owner, 'POST', `/api/workspace/features/${dark.id}/unmerge`))).statusCode, 200);
    const back = await fetch(`${base}${at(t.product.id, dark.id)}`, { redirect: 'manual' });
    assert.equal(back.status, 200, 'after the unmerge its address is its own again');
    assert.match(await back.text(), new RegExp(`id="feature-${dark.id}" data-feature="${dark.id}" aria-current="true"`));
    assert.deepEqual([(await read(dark.id)).json().data.id, (await read(dark.id)).json().data.mergedFrom], [dark.id, null]);
    const restored = await board();
    assert.equal(restored.features.find((f: { id: string }) => f.id === dark.id)?.voteCount, 1);
    assert.deepEqual(restored.releases.find((r: { id: string }) => r.id === shipped.json().data.id).features.map((f: { id: string }) => f.id), [dark.id]);
  });
  it('a page\'s reads count against its visitor\'s address in the public rate limit, not one address shared by every visitor', async () => {
    const limited = await ctx.buildApp({ publicRateLimitPerMinute: 3 });
    try {
      const visit = (remoteAddress: string) => limited.inject({ method: 'GET', url: `/roadmap/${t.product.id}`, remoteAddress });
      for (let i = 0; i < 3; i++) assert.equal((await visit('198.51.100.7')).statusCode, 200);
      assert.equal((await visit('203.0.113.9')).statusCode, 200, 'another visitor still reads the board');
      assert.notEqual((await visit('198.51.100.7')).statusCode, 200, 'the first visitor is over the limit');
    } finally {
      await limited.close();
    }
  });
});
