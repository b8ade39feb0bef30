import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Resvg } from '@resvg/resvg-js';
import { FastifyInstance } from 'fastify';
import jsQR from 'jsqr';
import { Browser, Page } from 'playwright-core';
import { createServiceKey } from '../../db/platform/service-keys';
import { asTeammate, call, settledHandle } from '../support/fixtures';
import { SCREENSHOTS, assertAxeClean, ensureChromium } from '../support/browser';
import { as, newQuestion, publishTemplate } from '../support/collection-setup';
import { PlacementTenant, approvedItem, createPlacement, createPlacementTenant, place, submit } from '../support/proof-fixtures';
import { ROOM_SCOPES, asKey, openRoom } from '../support/rooms';
import { route } from '../support/routes';
import { ConsoleHarness, consoleTabAs, openConsoleAsOwner } from '../support/console-session';
import { ctx } from '../support/root-hooks';

describe('console: placements, Rooms approvals and collection in a real browser (PAGES.md §5, §8)', function () {
  this.timeout(240_000);
  let t: PlacementTenant;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let notFound: string[];

  const signedIn = (role: 'owner' | 'member') => consoleTabAs(browser, base, t.organizationId, role);

  let harness: ConsoleHarness | undefined;
  before(async function () {
    if (ensureChromium()) this.skip();
    t = await createPlacementTenant();
    harness = await openConsoleAsOwner(t.organizationId);
    ({ app, base, browser, page, errors, notFound } = harness);
  });
  after(async () => {
    await harness?.close();
  });

  it('publishes a placement by keyboard after the dry-run counts, and the public render then shows the item', async () => {
    const placement = await createPlacement(t, { name: 'Pricing wall' });
    const shown = await approvedItem(t);
    const pending = await submit(t);
    for (const s of [shown, pending]) assert.equal((await place(t, placement.id, { proofItemId: s.proofItemId })).statusCode, 201);
    const render = () => call({ method: 'GET', url: `/api/public/proof/render/${placement.id}` }, app);
    assert.equal((await render()).statusCode, 404, 'a draft renders nothing');

    await page.click('a[data-nav=placements]');
    await page.waitForSelector(`tr[data-placement="${placement.id}"]`);
    assert.match(await page.textContent(`tr[data-placement="${placement.id}"]`) ?? '', /Pricing wall[\s\S]*draft[\s\S]*wall[\s\S]*website[\s\S]*2 items/);
    await page.click(`button[data-preview="${placement.id}"]`);
    await page.waitForSelector(`section[data-preview="${placement.id}"]`);
    assert.match(await page.textContent('[data-field=render]') ?? '', /Nothing renders: the placement is draft/);

    await page.focus(`button[data-check="${placement.id}"]`);
    await page.keyboard.press('Enter');
    const dryRun = await page.waitForSelector('[data-field=dry-run]');
    assert.equal(await dryRun.textContent(), 'Dry run: 1 item would render, 1 excluded because 1 × not_approved. Nothing is published yet.');
    assert.equal((await render()).statusCode, 404, 'the dry run published nothing');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'confirm-publish', 'the confirmation has the focus');
    await assertAxeClean(page, 'placements dry run');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-placements.png'), fullPage: true });
    await page.keyboard.press('Enter');
    await page.waitForSelector('#placement-status .notice:has-text("Published: 1 rendering, 1 excluded.")');
    assert.equal(await page.textContent(`tr[data-placement="${placement.id}"] [data-field=state]`), 'active');

    const manifest = (await render()).json().manifest;
    assert.deepEqual(manifest.items.map((i: { proofItemId: string }) => i.proofItemId), [shown.proofItemId]);
    await page.waitForSelector(`section[data-preview="${placement.id}"] .sv-item`);
    assert.match(await page.textContent('[data-field=render]') ?? '', /We cut onboarding from 9 days to 2\./, 'the preview shows the render\'s exact text');
    await assertAxeClean(page, 'placements preview');
  });

  it('approves a promise held for a person; its state changes through the API', async () => {
    const roomsKey = await createServiceKey(ctx.dataSource, {
      organizationId: t.organizationId, productId: t.product.id, environment: 'production', scopes: ROOM_SCOPES,
    });
    const rooms = { ...t, key: roomsKey.secret, keyId: roomsKey.key.id };
    const room = await openRoom(rooms, 'customer-1');
    const posted = await asKey(rooms, {
      method: 'POST', url: route('/api/v1/rooms/{id}/jobs', { id: room.id }),
      payload: { type: 'make_promise', params: { text: 'A fix for the CSV export by Friday', dueAt: new Date(Date.now() + 3 * 86_400_000).toISOString() } },
    });
    assert.equal(posted.statusCode, 202, posted.body);
    await (await settledHandle(`room-job/${posted.json().data.id}`)).result();
    const job = (await asKey(rooms, { method: 'GET', url: route('/api/v1/rooms/{id}/jobs/{jobId}', { id: room.id, jobId: posted.json().data.id }) })).json()
      .data;
    const { promiseId, approvalId } = job.result as { promiseId: string; approvalId: string };

    await page.click('a[data-nav=approvals]');
    const card = `li[data-approval="${approvalId}"]`;
    await page.waitForSelector(card);
    assert.equal(await page.textContent(`${card} [data-field=preview]`), 'A fix for the CSV export by Friday');
    assert.match(await page.textContent(card) ?? '', new RegExp(`Promise[\\s\\S]*${promiseId}[\\s\\S]*${room.id}`));
    await assertAxeClean(page, 'approvals');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-approvals.png'), fullPage: true });
    await page.fill(`${card} textarea[name=note]`, 'Checked with engineering.');
    await page.click(`${card} form.approve button`);
    await page.waitForSelector(card, { state: 'detached' });
    await page.waitForSelector('#approval-status .notice.ok:has-text("Approved")');

    const approved = (await call(asTeammate(t.owner, { method: 'GET', url: '/api/workspace/rooms/approvals?status=approved&kind=promise' }), app)).json().data;
    assert.deepEqual(approved.map((a: { id: string; note: string }) => [a.id, a.note]), [[approvalId, 'Checked with engineering.']]);
    assert.deepEqual(await ctx.dataSource.query('SELECT state FROM room_promises WHERE id = $1', [promiseId]), [{ state: 'active' }]);
  });

  it('publishes a collection flow\'s draft, downloads its QR code (decodes to the live link) and creates a personal request', async () => {
    const template = await publishTemplate(t);
    const question = await newQuestion(t);
    const created = await as(t.owner, {
      method: 'POST', url: '/api/proof/collect/forms',
      payload: {
        productId: t.product.id, name: 'Launch stories',
        definition: { consentTemplateVersionId: template.id, mediaKinds: ['text'],
          questions: [{ questionId: question.questionId, version: 1, required: true }] },
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const flow = created.json().data as { id: string; publicId: string; liveUrl: string };

    await page.click('a[data-nav=collection]');
    await page.waitForSelector(`li[data-flow="${flow.id}"]`);
    assert.match(await page.textContent(`li[data-flow="${flow.id}"]`) ?? '', /Never published/);
    assert.equal(await page.$(`a[data-qr="${flow.id}"]`), null, 'no QR code before the first version');
    await page.click(`button[data-publish="${flow.id}"]`);
    await page.waitForSelector('#collection-status .notice:has-text("Published version 1")');
    const detail = (await as(t.owner, { method: 'GET', url: `/api/proof/collect/forms/${flow.id}` })).json().data;
    assert.equal(detail.versions.length, 1);
    assert.equal(detail.state, 'live');
    await page.waitForSelector(`li[data-flow="${flow.id}"] .versions li`);

    const [download] = await Promise.all([page.waitForEvent('download'), page.click(`a[data-qr="${flow.id}"]`)]);
    const svg = fs.readFileSync((await download.path())!);
    assert.ok(svg.length > 0);
    assert.match(svg.toString('utf8'), /^<svg[\s\S]*<\/svg>\s*$/, 'an SVG');
    const png = new Resvg(svg, { fitTo: { mode: 'width', value: 400 }, background: 'white' }).render();
    const liveUrl = `${ctx.config.collectPageUrl}/f/${flow.publicId}`;
    assert.equal(jsQR(new Uint8ClampedArray(png.pixels), png.width, png.height)?.data, liveUrl, 'the QR code is the flow\'s public link');
    assert.ok(await page.$eval(`li[data-flow="${flow.id}"] .qr img`, (img) => (img as HTMLImageElement).naturalWidth > 0), 'the QR image shows');

    await page.selectOption('select[name=flowId]', flow.id);
    await page.selectOption('select[name=channel]', 'link');
    await page.fill('input[name=email]', 'dana@customer.example');
    await page.fill('input[name=name]', 'Dana');
    await page.click('#create-request button[type=submit]');
    const link = (await page.textContent('#collection-status [data-field="secret"]', { timeout: 10_000 }))!;
    assert.ok(link.startsWith(ctx.config.collectPageUrl), link);
    const [request] = (await as(t.owner, { method: 'GET', url: `/api/proof/collect/requests?flowId=${flow.id}` })).json().data;
    assert.deepEqual([request.status, request.recipient.email, request.channel], ['draft', 'dana@customer.example', 'link']);
    assert.match(await page.textContent(`tr[data-request="${request.id}"]`) ?? '', /Dana · dana@customer\.example[\s\S]*Launch stories[\s\S]*draft/);
    await assertAxeClean(page, 'collection');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-collection.png'), fullPage: true });
  });

  it('a member reads approvals and collection without their writes, is refused placements, and the API refuses their writes anyway', async () => {
    const member = await signedIn('member');
    const tab = member.page;
    await tab.click('a[data-nav=placements]');
    await tab.waitForSelector('main[data-view=placements] .notice.error');
    assert.match(await tab.textContent('main') ?? '', /Your role may not see this view/);
    await assertAxeClean(tab, 'member placements');
    await tab.click('a[data-nav=approvals]');
    await tab.waitForSelector('main h1:has-text("Rooms approvals")');
    assert.equal(await tab.$('form.approve'), null, 'no decisions for a member');
    await assertAxeClean(tab, 'member approvals');
    await tab.click('a[data-nav=collection]');
    await tab.waitForSelector('li[data-flow]');
    assert.equal(await tab.$('button[data-publish]'), null, 'no publishing for a member');
    assert.equal(await tab.$('#create-request'), null, 'no personal requests from a member');
    assert.ok(await tab.$('a[data-qr]'), 'the QR code is a read');
    await assertAxeClean(tab, 'member collection');
    await tab.screenshot({ path: path.join(SCREENSHOTS, 'console-member-collection.png'), fullPage: true });
    const flowId = await tab.$eval('li[data-flow]', (li) => (li as HTMLElement).dataset.flow!);
    const status = await tab.evaluate(async (id) => {
      const session = await (await fetch('/api/workspace/session')).json() as { data: { csrfToken: string } };
      const res = await fetch(`/api/proof/collect/forms/${id}`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.data.csrfToken }, body: JSON.stringify({ draftRevision: 1 }),
      });
      return res.status;
    }, flowId);
    assert.equal(status, 403, 'the API refuses the member\'s publish');
    await member.context.close();
  });

  it('left no page error and asked for nothing that is not there', () => {
    assert.deepEqual(notFound.filter((p) => p !== '/favicon.ico' && !p.startsWith('/api/public/proof/render/')), []);
    assert.deepEqual(errors.filter((e) => !/status of 40[134]/.test(e)), []);
  });
});
