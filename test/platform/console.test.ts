import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { FastifyInstance } from 'fastify';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { createTeammate } from '../../db/platform/tenancy';
import { issueSignInLink } from '../../db/platform/sign-in-links';
import { WEB_DIST, WEB_MANIFEST } from '../../web/manifest';
import { asTeammate, call, eventually, listenOnLoopback, withKey } from '../support/fixtures';
import { SCREENSHOTS, WIDE, assertAxeClean, collectPageErrors, ensureChromium, launchChromium } from '../support/browser';
import { mailedSignInToken } from '../support/console';
import {
  PlacementTenant, approvedItem, createPlacementTenant, ledgerTypes, publishedPlacement, requestApproval, submit, submissionBody,
} from '../support/proof-fixtures';
import { Receiver } from '../support/receiver';
import { collectNotFound } from '../support/console-session';
import { ctx } from '../support/root-hooks';

describe('console: the teammates\' single-page app in a real browser (PAGES.md §5, §8)', function () {
  this.timeout(240_000);
  let t: PlacementTenant;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let owner: BrowserContext;
  let page: Page;
  let errors: string[];
  let receiver: Receiver;
  let notFound: string[] = [];
  const ownerEmail = `owner-${randomBytes(4).toString('hex')}@team.example`;

  before(async function () {
    if (ensureChromium()) this.skip();
    t = await createPlacementTenant();
    await createTeammate(ctx.dataSource, { organizationId: t.organizationId, email: ownerEmail, role: 'owner' });
    // The browser is 127.0.0.1 like every test client, and the per-address sign-in window is shared by the suite.
    app = await ctx.buildApp({ signInPerAddressPerMinute: 100_000 });
    base = await listenOnLoopback(app);
    receiver = await Receiver.start();
    browser = await launchChromium();
    owner = await browser.newContext(WIDE);
    page = await owner.newPage();
    errors = collectPageErrors(page);
    notFound = collectNotFound(page);
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await app?.close();
  });

  it('serves one shell for every /console path with the strict CSP, within the 250 KB gzip budget', async () => {
    for (const url of ['/console', '/console/sign-in', '/console/keys/anything']) {
      const res = await call({ method: 'GET', url }, app);
      assert.equal(res.statusCode, 200, url);
      const csp = String(res.headers['content-security-policy']);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.match(res.body, /<html lang="en">/);
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(WEB_DIST, WEB_MANIFEST), 'utf8')) as Record<string, string>;
    const initial = ['console.js', 'console.css'].reduce((sum, name) => sum + zlib.gzipSync(fs.readFileSync(path.join(WEB_DIST, manifest[name]))).length, 0);
    console.log(`      console initial load: ${(initial / 1024).toFixed(1)} KB gzip (budget 250 KB)`);
    assert.ok(initial <= 250 * 1024);
    assert.equal((await call({ method: 'GET', url: '/openapi.json' }, app)).json().paths['/console'], undefined, 'pages stay out of the API document');
  });

  it('signs in from the e-mail link captured by the SMTP sink, and the secret leaves the address bar', async () => {
    await page.goto(`${base}/console`);
    await page.waitForSelector('#sign-in');
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    await assertAxeClean(page, 'sign-in');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-sign-in.png') });
    const before = ctx.smtpSink.to(ownerEmail).length;
    await page.fill('input[name=email]', ownerEmail);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#sign-in-status .notice');
    const token = await mailedSignInToken(ownerEmail, before);
    await page.goto(`${base}/console/sign-in#${token}`);
    await page.waitForSelector('header.console #sign-out');
    assert.equal(page.url(), `${base}/console/queue`);
    const cookies = await owner.cookies();
    const session = cookies.find((c) => c.name === 'sv_session')!;
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Lax');
  });

  it('approves one story from the queue (proof.item.approved in the ledger) and rejects another with a reason, by keyboard', async () => {
    const endpoint = await call(asTeammate(t.owner, {
      method: 'POST', url: '/api/workspace/webhooks/endpoints', payload: { url: `${receiver.url}/hook`, subscriptions: ['proof.item.approved'] },
    }), app);
    assert.equal(endpoint.statusCode, 201, endpoint.body);
    receiver.answer({ status: 500, body: 'receiver down for maintenance' });
    const first = await submit(t);
    const second = await submit(t, submissionBody({ content: { text: 'Support answered in minutes.', title: 'Quick support', rating: 5 } }));
    for (const s of [first, second]) assert.equal((await requestApproval(t, s.proofItemId, s.originalVersionId)).statusCode, 200);
    await page.goto(`${base}/console/queue`);
    await page.waitForSelector(`li[data-item="${first.proofItemId}"]`);
    const wording = await page.textContent(`li[data-item="${first.proofItemId}"] [data-field="wording"]`);
    assert.match(wording ?? '', /We cut onboarding from 9 days to 2\./, 'the exact wording');
    assert.match(await page.textContent(`li[data-item="${first.proofItemId}"]`) ?? '', /channels website, in_app, email/, 'the consent summary');
    await assertAxeClean(page, 'queue');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-queue.png') });

    const order = await page.$$eval('li.request', (els) => els.map((e) => (e as HTMLElement).dataset.item));
    const firstIndex = order.indexOf(first.proofItemId);
    await page.locator('h1').click();
    for (let i = 0; i < firstIndex; i += 1) await page.keyboard.press('j');
    await page.keyboard.press('a');
    await page.waitForSelector(`li[data-item="${first.proofItemId}"]`, { state: 'detached' });
    assert.ok((await ledgerTypes(first.proofItemId)).includes('proof.item.approved'));

    await page.fill(`li[data-item="${second.proofItemId}"] textarea`, 'The rating is not in the customer\'s words.');
    await page.click(`li[data-item="${second.proofItemId}"] form.reject button`);
    await page.waitForSelector(`li[data-item="${second.proofItemId}"]`, { state: 'detached' });
    const [rejected] = await ctx.dataSource.query('SELECT approval_state FROM proof_versions WHERE id = $1', [second.originalVersionId]);
    assert.equal(rejected.approval_state, 'rejected');
  });

  it('completes a revocation: the view shows where the item is still listed, and the next render drops it', async () => {
    const s = await approvedItem(t);
    const placementId = await publishedPlacement(t, [s.proofItemId]);
    const renderIds = async () => ((await call({ method: 'GET', url: `/api/public/proof/render/${placementId}` }, app)).json()
      .manifest.items as Array<{ proofItemId: string }>)
      .map((i) => i.proofItemId);
    assert.deepEqual(await renderIds(), [s.proofItemId]);
    const filed = await call(withKey(t.key, { method: 'POST', url: `/api/v1/proof/items/${s.proofItemId}/revoke`,
      payload: { requestText: 'Please take it down.' } }), app);
    assert.equal(filed.statusCode, 202);
    const revocationId = filed.json().data.revocation.id as string;
    await page.click('a[data-nav=revocations]');
    await page.waitForSelector(`li[data-revocation="${revocationId}"]`);
    const card = await page.textContent(`li[data-revocation="${revocationId}"]`);
    assert.match(card ?? '', /SLA: \d+ h \d+ min left/);
    assert.match(card ?? '', new RegExp(placementId), 'where the item is still listed');
    await assertAxeClean(page, 'revocations');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-revocations.png') });
    await page.click(`button[data-complete="${revocationId}"]`);
    await page.waitForSelector(`li[data-revocation="${revocationId}"]`, { state: 'detached' });
    assert.ok((await ledgerTypes(s.proofItemId)).includes('proof.consent.revoked'));
    assert.deepEqual(await renderIds(), [], 'the next render drops the item');
  });

  it('replays a failed delivery to the local receiver, with each attempt\'s status and excerpt', async () => {
    const [failed] = await eventually(async () => {
      const rows: Array<{ id: string }> = await ctx.dataSource.query(
        `SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.organization_id = $1 AND d.status = 'failed'`,
        [t.organizationId]);
      return rows.length ? rows : null;
    }, 60_000);
    receiver.answer({ status: 200 });
    const seen = receiver.requests.length;
    await page.click('a[data-nav=webhooks]');
    await page.waitForSelector(`tr[data-delivery="${failed.id}"]`);
    await page.click(`button[data-attempts="${failed.id}"]`);
    await page.waitForSelector('#attempts ol li');
    assert.match(await page.textContent('#attempts') ?? '', /500/);
    assert.match(await page.textContent('#attempts') ?? '', /receiver down for maintenance/);
    await assertAxeClean(page, 'webhooks');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-webhooks.png') });
    await page.click(`button[data-replay="${failed.id}"]`);
    await page.waitForSelector('#hook-status .notice.ok:has-text("Replayed")');
    const original = (await call(asTeammate(t.owner, { method: 'GET', url: `/api/workspace/webhooks/deliveries/${failed.id}` }), app)).json().data;
    await eventually(async () => receiver.requests.slice(seen).some((r) => r.body === original.body), 30_000);
    const replays = await call(asTeammate(t.owner, { method: 'GET', url: `/api/workspace/webhooks/deliveries?eventType=proof.item.approved` }), app);
    assert.ok(replays.json().data.some((d: { replayOfId: string | null }) => d.replayOfId === failed.id), 'a new delivery of the same event');
  });

  it('creates a key with scopes (secret shown once) and revokes it', async () => {
    await page.click('a[data-nav=keys]');
    await page.waitForSelector('#create-key');
    await page.fill('input[name=productId]', t.product.id);
    await page.check('input[value="service:proof:read"]');
    await page.check('input[value="service:signals:read"]');
    await page.click('#create-key button[type=submit]');
    const secret = (await page.textContent('#key-status [data-field="secret"]', { timeout: 10_000 }))!;
    assert.match(secret, /^svk_[A-Za-z0-9_-]{43}$/);
    assert.equal((await call(withKey(secret, { method: 'GET', url: '/api/v1/auth/whoami' }), app)).statusCode, 200);
    await assertAxeClean(page, 'keys');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-keys.png') });
    const keyId = (await call(asTeammate(t.owner, { method: 'GET', url: '/api/workspace/keys' }), app)).json().data[0].id as string;
    await page.click(`button[data-revoke="${keyId}"]`);
    await page.waitForSelector(`tr[data-key="${keyId}"]:not(:has(button[data-revoke]))`);
    assert.equal((await call(withKey(secret, { method: 'GET', url: '/api/v1/auth/whoami' }), app)).statusCode, 401);
    assert.ok(!(await page.content()).includes(secret), 'the secret is gone once the view changes');
  });

  it('a member sees read-only views; the API refuses their writes anyway', async () => {
    const member = await createTeammate(ctx.dataSource, { organizationId: t.organizationId, email: `member-${randomBytes(4).toString('hex')}@team.example`,
      role: 'member' });
    const link = await issueSignInLink(ctx.dataSource, member.id, `${base}/console`);
    const context = await browser.newContext(WIDE);
    const memberPage = await context.newPage();
    await memberPage.goto(link.url);
    await memberPage.waitForSelector('header.console #sign-out');
    await memberPage.waitForSelector('main .notice.error');
    assert.match(await memberPage.textContent('main') ?? '', /Your role may not see this view/);
    await assertAxeClean(memberPage, 'member queue');
    await memberPage.click('a[data-nav=keys]');
    await memberPage.waitForSelector('main[data-view=keys] h1');
    assert.equal(await memberPage.$('#create-key'), null, 'no create form for a member');
    await memberPage.click('a[data-nav=revocations]');
    await memberPage.waitForSelector('main[data-view=revocations] h1');
    assert.equal(await memberPage.$('button[data-complete]'), null);
    await memberPage.screenshot({ path: path.join(SCREENSHOTS, 'console-member.png') });
    const status = await memberPage.evaluate(async () => {
      const session = await (await fetch('/api/workspace/session')).json() as { data: { csrfToken: string } };
      const res = await fetch('/api/workspace/keys', {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.data.csrfToken },
        body: JSON.stringify({ productId: null, environment: 'production', scopes: ['service:proof:read'] }),
      });
      return res.status;
    });
    assert.equal(status, 403, 'the API refuses the member\'s write');
    await context.close();
  });

  it('signs out: the session ends and the console is back at sign-in', async () => {
    await page.click('#sign-out');
    await page.waitForSelector('#sign-in');
    const res = await page.evaluate(async () => (await fetch('/api/workspace/session')).status);
    assert.equal(res, 401);
    // The browser asks for /favicon.ico by itself; every other answer was found.
    assert.deepEqual(notFound.filter((p) => p !== '/favicon.ico'), []);
    assert.deepEqual(errors.filter((e) => !/status of 40[134]/.test(e)), []);
  });
});
