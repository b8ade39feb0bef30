import assert from 'node:assert/strict';
import path from 'node:path';
import { FastifyInstance } from 'fastify';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { verifyWebhookSignature } from '../../runtime/webhook-signature';
import { postSignal } from '../support/customer-loop';
import { Tenant, asTeammate, call, createTenant, endUserToken, eventually, sessionFor, withKey } from '../support/fixtures';
import { SCREENSHOTS, WIDE, assertAxeClean, ensureChromium } from '../support/browser';
import { Receiver } from '../support/receiver';
import { ConsoleHarness, consoleTab, openConsoleAsOwner } from '../support/console-session';

describe('console: threads, features and a webhook test event in a real browser (issues 28, 30)', function () {
  this.timeout(240_000);
  let t: Tenant;
  let harness: ConsoleHarness;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let receiver: Receiver;
  let notFound: string[] = [];

  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    call(asTeammate(t.owner, { method, url, ...(payload ? { payload } : {}) }), app);
  const feature = async (title: string, problem: string) => {
    const res = await api('POST', '/api/workspace/features', { productId: t.product.id, title, problem });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data.id as string;
  };
  const inbox = async (endUserId: string) => (await call({
    method: 'GET', url: '/api/v1/inbox', headers: { authorization: `Bearer ${endUserToken(t.product, { sub: endUserId })}` },
  }, app)).json().data as { items: Array<{ preview: string; threadId: string }> };
  const signedIn = (context: BrowserContext, teammateId: string) => consoleTab(context, base, teammateId);

  before(async function () {
    if (ensureChromium()) this.skip();
    t = await createTenant(['service:signals:read', 'service:signals:write', 'service:features:write']);
    harness = await openConsoleAsOwner(t.organizationId, t.owner.id);
    ({ app, base, browser, page, errors, notFound } = harness);
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver?.close();
    await harness?.close();
  });

  it('replies to a thread (the customer\'s inbox has it), adds a note (it does not), sets the owner, beside the duplicate suggestion', async () => {
    const dark = await feature('Dark mode', 'The white background hurts the eyes at night; users want a dark theme.');
    const { threadId } = await postSignal(t, {
      title: 'Dark mode please', body: 'The white background hurts my eyes at night. A dark theme would help a lot.', endUserId: 'console-customer',
    }, app);
    await page.click('a[data-nav=threads]');
    await page.waitForSelector(`tr[data-thread-row="${threadId}"]`);
    await assertAxeClean(page, 'threads');
    // By keyboard: the thread's link, then Enter.
    await page.focus(`tr[data-thread-row="${threadId}"] a`);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`.thread-detail[data-thread="${threadId}"]`);
    assert.equal(new URL(page.url()).pathname, `/console/threads/${threadId}`);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'thread-heading', 'focus moves to the opened thread');
    const aside = (await page.textContent('aside.suggestion')) ?? '';
    assert.match(aside, /Dark mode/);
    assert.match(aside, /score \d+%/);
    assert.match(aside, /matched words: .*dark/);
    assert.equal(await page.getAttribute('aside.suggestion a', 'href'), `/console/features/${dark}`);
    await assertAxeClean(page, 'thread');

    await page.fill('#thread-reply textarea', 'Dark mode ships next week.');
    await page.focus('#thread-reply button[type=submit]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#thread-status .notice.ok:has-text("Replied")');
    await page.waitForSelector('ol.messages li.customer:has-text("Dark mode ships next week.")');
    assert.deepEqual((await inbox('console-customer')).items.map((i) => [i.threadId, i.preview]), [[threadId, 'Dark mode ships next week.']]);

    await page.fill('#thread-reply textarea', 'INTERNAL: churn risk, keep an eye on them.');
    await page.check('#thread-reply input[value=internal]');
    await page.click('#thread-reply button[type=submit]');
    await page.waitForSelector('ol.messages li.internal:has-text("churn risk")');
    const after = await inbox('console-customer');
    assert.equal(after.items.length, 1, 'a note reaches no inbox');
    assert.ok(!JSON.stringify(after).includes('churn risk'));

    await page.selectOption('#thread-owner select[name=ownerId]', t.owner.id);
    await page.selectOption('#thread-owner select[name=state]', 'pending');
    await page.click('#thread-owner button[type=submit]');
    // The note's notice is still shown: wait for this form's own.
    await page.waitForSelector('#thread-status .notice.ok:has-text("Saved.")');
    const team = (await api('GET', `/api/workspace/threads/${threadId}`)).json().data;
    assert.deepEqual([team.ownerId, team.state], [t.owner.id, 'pending']);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-threads.png'), fullPage: true });

    await page.selectOption('#thread-filter select[name=owner]', 'unassigned');
    await page.click('#thread-filter button[type=submit]');
    // The filtered list, drawn (not the loading text, in which no row is attached either).
    await page.waitForSelector('main[data-view=threads] p:has-text("No thread matches")');
    assert.equal(await page.$(`tr[data-thread-row="${threadId}"]`), null);
    await page.selectOption('#thread-filter select[name=owner]', t.owner.id);
    await page.selectOption('#thread-filter select[name=state]', 'pending');
    await page.click('#thread-filter button[type=submit]');
    await page.waitForSelector(`tr[data-thread-row="${threadId}"]`);

    await page.click(`tr[data-thread-row="${threadId}"] a`);
    await page.click('aside.suggestion a');
    await page.waitForSelector(`section.feature-detail[data-feature="${dark}"]`);
  });

  it('merges two features after a confirmation (votes counted once on the survivor), unmerges, keeps a pair apart, toggles the board', async () => {
    const csv = await feature('Export to CSV', 'Customers want to export their reports to a CSV file for spreadsheets.');
    const reports = await feature('CSV export of reports', 'Export reports as CSV files to open them in spreadsheets.');
    const other = await feature('Export reports to CSV spreadsheets', 'A CSV export of every report for spreadsheets.');
    for (const [id, endUserId] of [[csv, 'v-1'], [csv, 'both'], [reports, 'both'], [reports, 'v-2']]) {
      const voted = await call(withKey(t.key, { method: 'POST', url: `/api/v1/features/${id}/votes`, payload: { endUserId } }), app);
      assert.equal(voted.statusCode, 200, voted.body);
    }
    await page.click('a[data-nav=features]');
    await page.waitForSelector(`tr[data-feature-row="${reports}"]`);
    await assertAxeClean(page, 'features');
    await page.click(`tr[data-feature-row="${reports}"] a`);
    await page.waitForSelector(`section.feature-detail[data-feature="${reports}"] li[data-candidate="${csv}"]`);
    assert.match(await page.textContent(`li[data-candidate="${csv}"]`) ?? '', /score \d+% · matched words: .*csv/);
    await assertAxeClean(page, 'feature');

    await page.click(`button[data-merge="${csv}"]`);
    await page.waitForSelector('#merge-confirm[open]');
    assert.match(await page.textContent('#merge-question') ?? '', /Merge Export to CSV into CSV export of reports\?/);
    await assertAxeClean(page, 'merge confirmation');
    await page.keyboard.press('Escape');
    await page.waitForSelector('#merge-confirm', { state: 'hidden' });
    assert.equal((await api('GET', `/api/workspace/features/${csv}`)).json().data.mergedInto, null, 'cancelled: nothing merged');

    await page.click(`button[data-merge="${csv}"]`);
    await page.waitForSelector('#merge-confirm[open]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#feature-status .notice.ok:has-text("Merged")');
    const survivor = (await api('GET', `/api/workspace/features/${reports}`)).json().data;
    assert.equal(survivor.voteCount, 3, 'v-1, both (once) and v-2');
    assert.match(await page.textContent(`section.feature-detail [data-field=figures]`) ?? '', /3 votes/);
    assert.match(await page.textContent(`tr[data-feature-row="${reports}"] [data-field=votes]`) ?? '', /^3$/);
    assert.equal(await page.$(`tr[data-feature-row="${csv}"]`), null, 'the merged feature leaves the list');
    await page.waitForSelector(`li[data-merged="${csv}"]`);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-features.png'), fullPage: true });

    await page.click(`li[data-merged="${csv}"] button[data-unmerge]`);
    await page.waitForSelector(`tr[data-feature-row="${csv}"]`);
    assert.equal((await api('GET', `/api/workspace/features/${reports}`)).json().data.voteCount, 2);
    assert.equal((await api('GET', `/api/workspace/features/${csv}`)).json().data.voteCount, 2);

    await page.click(`tr[data-feature-row="${reports}"] a`);
    await page.waitForSelector(`li[data-candidate="${other}"]`);
    await page.click(`button[data-not-duplicate="${other}"]`);
    await page.waitForSelector('#feature-status .notice.ok:has-text("Kept apart")');
    assert.equal(await page.$(`li[data-candidate="${other}"]`), null, 'kept apart');

    await page.check(`input[data-board="${reports}"]`);
    await page.waitForSelector('#feature-status .notice.ok:has-text("Shown on the public board")');
    assert.equal((await api('GET', `/api/workspace/features/${reports}`)).json().data.publicBoard, true);
  });

  it('sends a test event to one endpoint: signed, and in the delivery log', async () => {
    const created = await api('POST', '/api/workspace/webhooks/endpoints', { url: `${receiver.url}/console-test`, subscriptions: ['release.published'] });
    assert.equal(created.statusCode, 201, created.body);
    const { endpoint, secret } = created.json().data as { endpoint: { id: string }; secret: string };
    await page.click('a[data-nav=webhooks]');
    await page.waitForSelector(`button[data-test-event="${endpoint.id}"]`);
    await page.click(`button[data-test-event="${endpoint.id}"]`);
    await page.waitForSelector('#hook-status .notice.ok:has-text("whd_")');
    const deliveryId = /whd_[a-z0-9]+/.exec(await page.textContent('#hook-status') ?? '')?.[0];
    assert.ok(deliveryId);
    assert.match(await page.textContent(`tr[data-delivery="${deliveryId}"]`) ?? '', /webhook\.test/);
    const req = await eventually(async () => receiver.requests.find((r) => r.headers['service-delivery-id'] === deliveryId), 30_000);
    assert.equal(req.headers['service-event-type'], 'webhook.test');
    assert.ok(verifyWebhookSignature({ body: req.body, header: req.headers['service-signature'] as string, secrets: secret }));
    await assertAxeClean(page, 'webhooks with a test event');
  });

  it('a member reads threads and features, may reply, and is offered no other write; the API refuses a merge', async () => {
    const member = await sessionFor(t.organizationId, 'member');
    const context = await browser.newContext(WIDE);
    const memberPage = await signedIn(context, member.id);
    const { threadId } = await postSignal(t, { endUserId: 'member-sees' }, app);
    await memberPage.goto(`${base}/console/threads/${threadId}`);
    await memberPage.waitForSelector(`.thread-detail[data-thread="${threadId}"]`);
    assert.ok(await memberPage.$('#thread-reply'), 'members reply and add notes');
    assert.equal(await memberPage.$('#thread-owner'), null);
    assert.equal(await memberPage.$('#thread-promise'), null);
    await assertAxeClean(memberPage, 'member thread');
    await memberPage.click('a[data-nav=features]');
    await memberPage.waitForSelector('main[data-view=features] h1');
    const [first] = (await api('GET', '/api/workspace/features')).json().data as Array<{ id: string }>;
    await memberPage.click(`tr[data-feature-row="${first.id}"] a`);
    await memberPage.waitForSelector('section.feature-detail');
    assert.equal(await memberPage.$('button[data-merge], button[data-unmerge], button[data-not-duplicate], input[data-board]'), null);
    assert.match(await memberPage.textContent('main') ?? '', /Your role \(member\) may read this view/);
    await assertAxeClean(memberPage, 'member features');
    await memberPage.screenshot({ path: path.join(SCREENSHOTS, 'console-member-features.png'), fullPage: true });
    const status = await memberPage.evaluate(async (id) => {
      const session = await (await fetch('/api/workspace/session')).json() as { data: { csrfToken: string } };
      const res = await fetch(`/api/workspace/features/${id}/unmerge`, { method: 'POST', headers: { 'x-csrf-token': session.data.csrfToken } });
      return res.status;
    }, first.id);
    assert.equal(status, 403);
    await context.close();
    assert.deepEqual(notFound.filter((p) => p !== '/favicon.ico'), []);
    assert.deepEqual(errors.filter((e) => !/status of 40[134]/.test(e)), []);
  });
});
