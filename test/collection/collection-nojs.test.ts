import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { Browser } from 'playwright-core';
import { ledgerTypes } from '../support/proof-fixtures';
import { listenOnLoopback } from '../support/fixtures';
import { ctx } from '../support/root-hooks';
import { ensureChromium, launchChromium } from '../support/browser';
import { CollectionTenant, asDraft, createCollectionTenant, customerCall, startDraft, collectionTenantOverHttp } from '../support/collection';

const form = (t: CollectionTenant, action: string, key: string) => `<!doctype html><html><body>
<form method="post" action="${action}">
  <input type="hidden" name="flow" value="${t.publicId}">
  <input type="hidden" name="flowVersion" value="${t.flowVersionId}">
  <input type="hidden" name="submissionKey" value="${key}">
  <textarea name="text">Support answered within the hour, every time.</textarea>
  <input name="title" value="Fast support">
  <input name="name" value="Grace Hopper">
  <input name="company" value="Navy">
  <select name="displayMode"><option value="first_name" selected>First name</option></select>
  <input type="checkbox" name="identityFields" value="name" checked>
  <input type="checkbox" name="identityFields" value="company" checked>
  <input type="checkbox" name="channels" value="website" checked>
  <input type="checkbox" name="channels" value="email" checked>
  <textarea name="q.${t.questionId}">We stopped waiting.</textarea>
  <input type="checkbox" name="consent" value="yes" checked>
  <input name="website" value="" style="display:none">
  <button id="send" type="submit">Send</button>
</form></body></html>`;

describe('collection: the no-JavaScript form in a real browser', function () {
  this.timeout(180_000);
  let t: CollectionTenant;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;

  before(async function () {
    const missing = ensureChromium();
    if (missing) this.skip();
    t = await createCollectionTenant();
    app = await ctx.buildApp();
    base = await listenOnLoopback(app);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });

  it('posts the form as a browser does and answers a receipt page with the control link and no script', async () => {
    const page = await browser.newPage();
    await page.setContent(form(t, `${base}/api/proof/collect/nojs`, `key-${randomBytes(8).toString('hex')}`));
    const [response] = await Promise.all([page.waitForNavigation(), page.click('#send')]);
    assert.equal(response?.status(), 200);
    const headers = response!.headers();
    assert.match(headers['content-type'], /text\/html/);
    assert.equal(headers['cache-control'], 'no-store');
    assert.equal(headers['referrer-policy'], 'no-referrer');
    assert.match(headers['content-security-policy'], /default-src 'none'/);
    const html = await response!.text();
    assert.ok(!/<script/i.test(html), 'no script on the receipt');
    const controlUrl = await page.textContent('[data-field="controlUrl"]');
    assert.match(controlUrl ?? '', /\/control#ct_[A-Za-z0-9_-]{43}$/);
    const proofItemId = (await page.textContent('[data-field="proofItemId"]'))!;
    assert.match(proofItemId, /^prf_/);
    assert.ok(await page.textContent('[data-field="receiptId"]'));
    assert.ok(html.includes(t.wordingHash), 'the receipt shows the wording hash');
    assert.deepEqual(await ledgerTypes(proofItemId), ['proof.response.submitted', 'proof.consent.granted']);
    const [grant] = await ctx.dataSource.query(`SELECT channels, identity_fields, display_mode FROM consent_grants WHERE proof_item_id = $1`, [proofItemId]);
    assert.deepEqual(grant, { channels: ['website', 'email'], identity_fields: ['name', 'company'], display_mode: 'first_name' });
    const token = controlUrl!.split('#')[1];
    const control = await customerCall({ method: 'GET', url: '/api/proof/collect/control', headers: { 'x-control-token': token } });
    assert.equal(control.json().data.stories[0].proofItemId, proofItemId);
    await page.close();
  });

  it('answers refusals as HTML pages with the same status and code', async () => {
    const key = `key-${randomBytes(8).toString('hex')}`;
    const body = (extra: Record<string, string>) => new URLSearchParams({
      flow: t.publicId, flowVersion: t.flowVersionId, submissionKey: key, text: 'Great product, truly.', consent: 'yes',
      [`q.${t.questionId}`]: 'yes', ...extra,
    }).toString();
    const post = (payload: string) => customerCall({
      method: 'POST', url: '/api/proof/collect/nojs', payload, headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const first = await post(body({}));
    assert.equal(first.statusCode, 200, first.body);
    const repeat = await post(body({}));
    assert.equal(repeat.statusCode, 409);
    assert.match(repeat.headers['content-type'] as string, /text\/html/);
    assert.match(repeat.body, /<p data-code="CONFLICT">/);
    const noConsent = await post(body({ consent: 'no', submissionKey: `key-${randomBytes(8).toString('hex')}` }));
    assert.equal(noConsent.statusCode, 400);
    assert.match(noConsent.body, /data-code="INVALID_INPUT"/);
    const honeypot = await post(body({ website: 'http://spam.example', submissionKey: `key-${randomBytes(8).toString('hex')}` }));
    assert.equal(honeypot.statusCode, 400);
    const changed = await post(body({ flowVersion: 'flv_old0000000000000', submissionKey: `key-${randomBytes(8).toString('hex')}` }));
    assert.equal(changed.statusCode, 409);
    assert.match(changed.body, /form changed/);
    const escaped = await post(body({ text: '<script>alert(1)</script> is what I typed', submissionKey: `key-${randomBytes(8).toString('hex')}` }));
    assert.equal(escaped.statusCode, 200);
    assert.ok(!escaped.body.includes('<script>'));
    assert.ok(escaped.body.includes('&lt;script&gt;'));
  });
});

describe('collection: the no-JavaScript form over HTTP', () => {
  let t: CollectionTenant;
  let app: FastifyInstance;
  let base: string;

  before(async () => {
    ({ t, app, base } = await collectionTenantOverHttp());
  });

  const formBody = (key: string, extra: Record<string, string> = {}) => new URLSearchParams({
    flow: t.publicId, flowVersion: t.flowVersionId, submissionKey: key, text: 'Support answered within the hour.', consent: 'yes',
    [`q.${t.questionId}`]: 'We stopped waiting.', ...extra,
  }).toString();
  const post = (body: string) => fetch(`${base}/api/proof/collect/nojs`, {
    method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

  it('identical posts sent at once make exactly one story: the submissionKey is claimed atomically, the others answer 409', async () => {
    const key = `race-${randomBytes(12).toString('hex')}`;
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(formBody(key))));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409, 409, 409, 409, 409]);
    for (const r of answers.filter((a) => a.status === 409)) assert.match(await r.text(), /<p data-code="CONFLICT">/);
    const [{ drafts }] = await ctx.dataSource.query(
      `SELECT count(*)::int AS drafts FROM collection_drafts WHERE flow_id = $1 AND fields->>'submissionKey' = $2`, [t.flowId, key]);
    assert.equal(drafts, 1);
    const [{ stories }] = await ctx.dataSource.query(
      `SELECT count(*)::int AS stories FROM proof_items i JOIN collection_drafts d ON d.proof_item_id = i.id
        WHERE d.flow_id = $1 AND d.fields->>'submissionKey' = $2`, [t.flowId, key]);
    assert.equal(stories, 1, 'exactly one story');
    assert.equal((await post(formBody(key))).status, 409, 'a later repeat within 24 hours is refused too');
  });

  it('a refused post leaves its key free: the corrected form with the same key is taken', async () => {
    const key = `fix-${randomBytes(12).toString('hex')}`;
    assert.equal((await post(formBody(key, { consent: 'no' }))).status, 400);
    assert.equal((await post(formBody(key))).status, 200);
  });

  it('a name of only spaces is refused at input: the form and a draft\'s identity answer 400 INVALID_INPUT', async () => {
    const form = await post(formBody(`blank-${randomBytes(12).toString('hex')}`, { name: '   ', displayMode: 'initials', identityFields: 'name' }));
    assert.equal(form.status, 400);
    assert.match(await form.text(), /data-code="INVALID_INPUT"/);
    const d = await startDraft(t, app);
    const patched = await customerCall(asDraft(d, { method: 'PATCH', url: `/api/proof/collect/drafts/${d.id}`,
      payload: { identity: { name: ' \t ' }, displayMode: 'initials' } }), app);
    assert.equal(patched.statusCode, 400, patched.body);
    assert.equal(patched.json().code, 'INVALID_INPUT');
  });

  it('a claim older than 24 hours may be taken again', async () => {
    const key = `old-${randomBytes(12).toString('hex')}`;
    assert.equal((await post(formBody(key))).status, 200);
    await ctx.dataSource.query(
      `UPDATE collection_nojs_submissions SET created_at = now() - interval '25 hours' WHERE flow_id = $1 AND submission_key = $2`, [t.flowId, key]);
    assert.equal((await post(formBody(key))).status, 200);
  });
});
