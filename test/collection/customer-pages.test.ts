import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { FastifyInstance } from 'fastify';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { WEB_DIST } from '../../web/manifest';
import { ctx } from '../support/root-hooks';
import { asTeammate, call, eventually, withKey } from '../support/fixtures';
import { freePort } from '../support/servers';
import { approve, publishedPlacement, requestApproval } from '../support/proof-fixtures';
import { CollectionTenant, WORDING, createCollectionTenant, customerCall, sha256 } from '../support/collection';
import { as } from '../support/collection-setup';
import { PHONE, collectPageErrors, ensureChromium, launchChromiumWithMedia, seriousViolations } from '../support/browser';

const SHOTS = path.join(__dirname, '../../docs/screenshots');

/**
 * axe-core on a page whose JavaScript is off: axe runs asynchronously, which such a page cannot, so it runs
 * on a copy of the page as it is now (the same URL and markup, its module script left out) in a context with JavaScript.
 */
async function violationsWithoutScript(page: Page, withScript: BrowserContext) {
  const markup = (await page.content()).replace(/<script type="module"[^>]*><\/script>/g, '');
  const copy = await withScript.newPage();
  await copy.route(page.url(), (route) => route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: markup }));
  await copy.goto(page.url());
  const violations = await seriousViolations(copy);
  await copy.close();
  return violations;
}

let axeContext: BrowserContext | null = null;

/** No serious or critical axe-core violation, no horizontal scroll, no script error: on every page and state reached. */
async function checkPage(page: Page, errors: string[], what: string, scripted = true) {
  const violations = scripted ? await seriousViolations(page) : await violationsWithoutScript(page, axeContext!);
  assert.deepEqual(violations, [], `${what}: ${JSON.stringify(violations, null, 1)}`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `${what}: no horizontal scroll (${overflow}px too wide)`);
  assert.deepEqual(errors.filter((e) => !/Failed to load resource/.test(e)), [], `${what}: page errors`);
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`) });

/** The app on a known port, so the links it hands out (PROOF_COLLECT_PAGE_URL) point at it. */
async function appOnPort(): Promise<{ app: FastifyInstance; base: string }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const app = await ctx.buildApp({ port, publicBaseUrl: base, collectPageUrl: `${base}/collect` });
  await app.listen({ host: '127.0.0.1', port });
  return { app, base };
}

const renderOf = async (placementId: string) => (await call({ method: 'GET', url: `/api/public/proof/render/${placementId}` })).json()
  .manifest.items as Array<{ proofItemId: string; content: { text?: string } }>;

/** A teammate edits the story's words: a new version the customer must approve. */
async function teammateEdits(t: CollectionTenant, proofItemId: string, text: string) {
  const edited = await call(withKey(t.key, {
    method: 'POST', url: `/api/v1/proof/items/${proofItemId}/versions`,
    payload: { content: { text, title: 'Faster onboarding' }, changeReason: 'tightened wording' },
  }));
  assert.equal(edited.statusCode, 201, edited.body);
  return edited.json().data as { id: string; contentHash: string };
}

async function teammateApproves(t: CollectionTenant, proofItemId: string, versionId: string) {
  assert.equal((await requestApproval(t, proofItemId, versionId)).statusCode, 200);
  const approved = await approve(t, proofItemId, versionId);
  assert.equal(approved.statusCode, 200, approved.body);
}

describe('customer pages in a real browser (phone, with and without JavaScript)', function () {
  this.timeout(240_000);
  let t: CollectionTenant;
  let base: string;
  let app: FastifyInstance;
  let browser: Browser;

  before(async function () {
    if (ensureChromium()) this.skip();
    fs.mkdirSync(SHOTS, { recursive: true });
    t = await createCollectionTenant();
    ({ app, base } = await appOnPort());
    browser = await launchChromiumWithMedia();
    axeContext = await browser.newContext(PHONE);
  });
  after(async () => {
    await browser?.close();
  });

  it('the script with its recorder stays within 60 KB gzip (PAGES.md §8)', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(WEB_DIST, 'manifest.json'), 'utf8')) as Record<string, string>;
    const gzip = zlib.gzipSync(fs.readFileSync(path.join(WEB_DIST, manifest['customer.js']))).length;
    console.log(`      customer.js: ${(gzip / 1024).toFixed(1)} KB gzip`);
    assert.ok(gzip <= 60 * 1024, `${gzip} bytes gzip`);
  });

  it('with JavaScript: answer, record 3 s, survive a cut upload part, consent, submit; approve new wording; withdraw', async () => {
    const context: BrowserContext = await browser.newContext({ ...PHONE, permissions: ['camera', 'microphone', 'clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    const response = await page.goto(`${base}/collect/f/${t.publicId}`);
    assert.equal(response?.status(), 200);
    const headers = response!.headers();
    assert.doesNotMatch(headers['content-security-policy'], /unsafe-inline|unsafe-eval/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.equal(await page.textContent('blockquote.wording'), WORDING, 'the consent wording verbatim');
    assert.ok((await page.textContent('main'))!.includes(t.wordingHash), 'with its version');
    const drafts = async () => (await ctx.dataSource.query(`SELECT count(*)::int AS n FROM collection_drafts WHERE flow_id = $1`, [t.flowId]))[0].n as number;
    const before = await drafts();
    await page.waitForSelector('#media:not([hidden])');
    await checkPage(page, errors, 'live flow');
    await shot(page, 'customer-flow');
    assert.equal(await drafts(), before, 'showing the form creates nothing');

    // Answers: the first keystroke opens a draft; every change autosaves.
    await page.getByLabel('5 stars').check();
    await page.fill('#f-text', 'Onboarding went from nine days to two.');
    await page.fill('#q-1', 'We stopped copying spreadsheets.');
    await page.fill('#f-name', 'Ada Lovelace');
    await page.fill('#f-company', 'Analytical Ltd');
    await page.getByLabel('Initials').check();
    await page.waitForSelector('#save-status:has-text("Saved")');
    assert.equal(await drafts(), before + 1, 'one draft, opened when the person started answering');
    assert.equal(await page.textContent('[data-preview="as"]'), 'A. L., Analytical Ltd', 'what will be shown');

    // Record 3 seconds from the fake camera, review, then send it with one part cut on the way.
    await page.getByRole('button', { name: 'Record video' }).click();
    await page.waitForSelector('#stop-recording');
    await page.waitForTimeout(3_000);
    await page.click('#stop-recording');
    await page.waitForSelector('.media-stage video[controls]');
    await checkPage(page, errors, 'recording review');
    await shot(page, 'customer-recording');
    let cut = 0;
    let parts = 0;
    await page.route('**/uploads/*?part=*', async (route) => {
      parts += 1;
      if (cut === 0) {
        cut += 1;
        return route.abort('connectionreset');
      }
      return route.continue();
    });
    await page.getByRole('button', { name: 'Use this' }).click();
    await page.waitForSelector('[data-state="attached"]', { timeout: 60_000 });
    errors.splice(0); // the cut part is logged by the browser as a failed request: that is the point
    assert.equal(cut, 1, 'one part was cut');
    assert.ok(parts >= 2, 'and sent again');
    await page.unroute('**/uploads/*?part=*');

    await page.check('#f-consent');
    await page.getByRole('button', { name: 'Send my story' }).click();
    await page.waitForSelector('#thanks-h');
    const controlUrl = (await page.textContent('[data-field="controlUrl"]'))!;
    assert.match(controlUrl, new RegExp(`^${base}/collect/control#ct_[A-Za-z0-9_-]{43}$`), 'the control link points home');
    await page.getByRole('button', { name: 'Copy the link' }).click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), controlUrl);
    const [receipt] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download your signed receipt' }).click()]);
    const signed = JSON.parse(fs.readFileSync((await receipt.path())!, 'utf8'));
    assert.ok(signed.signature?.value, 'a signed receipt');
    await checkPage(page, errors, 'thanks');
    await shot(page, 'customer-thanks');

    const token = controlUrl.split('#')[1];
    const story = (await customerCall({ method: 'GET', url: '/api/proof/collect/control', headers: { 'x-control-token': token } })).json().data.stories[0];
    assert.equal(story.type, 'video', 'the recording is part of the story');
    assert.equal(story.currentVersion.content.mediaAssetIds.length, 1);
    const proofItemId = story.proofItemId as string;

    // A teammate approves it and places it; then edits the words, which the customer approves on the control page.
    await teammateApproves(t, proofItemId, story.currentVersion.id);
    const placementId = await publishedPlacement(t, [proofItemId]);
    assert.deepEqual((await renderOf(placementId)).map((i) => i.proofItemId), [proofItemId]);
    const newWords = 'Onboarding: nine days down to two.';
    const version = await teammateEdits(t, proofItemId, newWords);

    await page.goto(controlUrl);
    await page.waitForSelector(`[data-version="${version.id}"]`);
    assert.equal(new URL(page.url()).hash, '', 'the code left the address bar');
    assert.ok((await page.textContent(`[data-version="${version.id}"]`))!.includes(version.contentHash), 'the hash it approves');
    assert.equal(await page.getAttribute(`[data-placement="${placementId}"]`, 'data-renders-now'), 'true');
    await checkPage(page, errors, 'control');
    await shot(page, 'customer-control');
    await page.getByRole('button', { name: 'Approve these exact words' }).click();
    await page.waitForSelector('.notice[role="status"]');
    await checkPage(page, errors, 'control after approving');
    await teammateApproves(t, proofItemId, version.id);
    const shown = await renderOf(placementId);
    assert.equal(shown[0]?.content.text, newWords, 'the wall\'s next render shows the approved words');

    // Withdraw everywhere, behind a confirmation that says it is final.
    await page.reload();
    await page.waitForSelector('[data-story]');
    await page.getByText('Withdraw everywhere').click();
    assert.ok((await page.textContent('details.danger'))!.includes('final'));
    await page.check('input[name="confirm"]');
    await page.getByRole('button', { name: 'Withdraw my story everywhere' }).click();
    await page.waitForSelector('[data-state="withdrawn"]');
    await checkPage(page, errors, 'control after withdrawing');
    assert.deepEqual(await renderOf(placementId), [], 'the next render leaves it out');
    await context.close();
  });

  it('without JavaScript: the plain form posts to the no-JS route, its receipt keeps the control link; the control page works by pasting the code',
    async () => {
      const context = await browser.newContext({ ...PHONE, javaScriptEnabled: false });
      const page = await context.newPage();
      const errors = collectPageErrors(page);
      await page.goto(`${base}/collect/f/${t.publicId}`);
      assert.equal(await page.isHidden('#media'), true, 'recording needs the script; the form works without');
      await page.getByLabel('4 stars').check();
      await page.fill('#f-text', 'Support answered within the hour, every time.');
      await page.fill('#q-1', 'We stopped waiting.');
      await page.fill('#f-name', 'Grace Hopper');
      await page.fill('#f-company', 'Navy');
      await page.check('#f-consent');
      await checkPage(page, errors, 'live flow without JavaScript', false);
      const [receipt] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Send my story' }).click()]);
      assert.equal(receipt?.status(), 200);
      assert.match(receipt!.url(), /\/api\/proof\/collect\/nojs$/);
      const controlUrl = (await page.textContent('[data-field="controlUrl"]'))!;
      assert.match(controlUrl, new RegExp(`^${base}/collect/control#ct_`));
      const proofItemId = (await page.textContent('[data-field="proofItemId"]'))!;
      await shot(page, 'customer-receipt-nojs');

      await page.goto(controlUrl);
      assert.ok((await page.textContent('main'))!.includes('needs JavaScript'));
      await checkPage(page, errors, 'control without JavaScript, before the code', false);
      await shot(page, 'customer-paste-code');
      const openControl = async () => {
        await page.goto(`${base}/collect/control`);
        await page.fill('#code', controlUrl.split('#')[1]);
        const [res] = await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Open' }).click()]);
        assert.equal(res?.status(), 200);
        assert.equal(new URL(page.url()).search, '', 'the code went in the POST body, never the URL');
        assert.equal(res!.headers()['referrer-policy'], 'no-referrer');
        assert.equal(res!.headers()['cache-control'], 'no-store');
      };
      await openControl();
      assert.ok(await page.isVisible(`[data-story="${proofItemId}"]`));
      await checkPage(page, errors, 'control rendered by the server', false);

      const original = (await customerCall({ method: 'GET', url: '/api/proof/collect/control',
        headers: { 'x-control-token': controlUrl.split('#')[1] } })).json()
        .data.stories[0].currentVersion.id;
      await teammateApproves(t, proofItemId, original);
      const placementId = await publishedPlacement(t, [proofItemId]);
      const newWords = 'Support answers within the hour.';
      const version = await teammateEdits(t, proofItemId, newWords);
      await openControl();
      await page.getByRole('button', { name: 'Approve these exact words' }).click();
      await page.waitForSelector('.notice[role="status"]');
      assert.ok(!(await page.isVisible(`[data-version="${version.id}"]`)), 'no longer pending');
      await checkPage(page, errors, 'control after approving, without JavaScript', false);
      await teammateApproves(t, proofItemId, version.id);
      assert.equal((await renderOf(placementId))[0]?.content.text, newWords);

      await page.getByText('Withdraw everywhere').click();
      await page.check('input[name="confirm"]');
      await page.getByRole('button', { name: 'Withdraw my story everywhere' }).click();
      await page.waitForSelector('[data-state="withdrawn"]');
      await checkPage(page, errors, 'control after withdrawing, without JavaScript', false);
      await shot(page, 'customer-withdrawn-nojs');
      assert.deepEqual(await renderOf(placementId), []);
      await context.close();
    });

  const newRequest = async (recipient: Record<string, string>) => {
    const made = await call(asTeammate(t.owner, { method: 'POST', url: '/api/proof/collect/requests',
      payload: { flowId: t.flowId, channel: 'link', recipient } }), app);
    assert.equal(made.statusCode, 201, made.body);
    const { request, linkUrl } = made.json().data;
    const sent = await call(asTeammate(t.owner, { method: 'POST', url: `/api/proof/collect/requests/${request.id}`, payload: { action: 'send' } }));
    assert.equal(sent.statusCode, 200, sent.body);
    return { id: request.id as string, linkUrl: linkUrl as string };
  };
  const statusOf = async (id: string) => (await ctx.dataSource.query(`SELECT status FROM proof_requests WHERE id = $1`, [id]))[0].status as string;

  it('a request link pre-fills the form from the request and opts out in one click (with and without JavaScript)', async () => {
    const request = await newRequest({ email: 'lin@customer.test', name: 'Lin Chen', personRef: 'cust-lin' });
    assert.match(request.linkUrl, new RegExp(`^${base}/collect/r#pr_`));
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(request.linkUrl);
    await page.waitForSelector('#story');
    assert.equal(new URL(page.url()).hash, '', 'the code left the address bar');
    assert.equal(await page.inputValue('#f-name'), 'Lin Chen');
    assert.equal(await page.inputValue('#f-email'), 'lin@customer.test');
    assert.ok(await page.isVisible('#opt-out-form'), 'a visible opt-out');
    await checkPage(page, errors, 'request');
    await shot(page, 'customer-request');
    await page.getByRole('button', { name: 'Stop all story requests' }).click();
    await page.waitForSelector('[data-state="opted-out"]');
    await checkPage(page, errors, 'opted out');
    await shot(page, 'customer-opt-out');
    assert.equal(await statusOf(request.id), 'opted_out');

    // Without JavaScript: the code is pasted; the form is pre-filled, sent, and the opt-out page confirms in one click.
    const other = await newRequest({ email: 'sam@customer.test', name: 'Sam Park', personRef: 'cust-sam' });
    const nojs = await browser.newContext({ ...PHONE, javaScriptEnabled: false });
    const plain = await nojs.newPage();
    const plainErrors = collectPageErrors(plain);
    await plain.goto(`${base}/collect/r`);
    await plain.fill('#code', other.linkUrl.split('#')[1]);
    await Promise.all([plain.waitForNavigation(), plain.getByRole('button', { name: 'Open' }).click()]);
    assert.equal(await plain.inputValue('#f-name'), 'Sam Park');
    await checkPage(plain, plainErrors, 'request without JavaScript', false);
    await plain.fill('#q-1', 'Faster answers.');
    await plain.fill('#f-text', 'Every answer came within the hour.');
    await plain.fill('#f-name', '   ');
    await plain.check('#f-consent');
    await Promise.all([plain.waitForNavigation(), plain.getByRole('button', { name: 'Send my story' }).click()]);
    assert.match((await plain.textContent('[data-error-for="name"]'))!, /spaces/,
      `the refusal is a sentence next to its field: ${await plain.textContent('main')}`);
    assert.equal(await plain.inputValue('#q-1'), 'Faster answers.', 'the form kept every value');
    await checkPage(plain, plainErrors, 'request refused without JavaScript', false);
    await plain.fill('#f-name', 'Sam Park');
    await plain.check('#f-consent');
    await Promise.all([plain.waitForNavigation(), plain.getByRole('button', { name: 'Send my story' }).click()]);
    assert.match((await plain.textContent('[data-field="controlUrl"]'))!, /\/collect\/control#ct_/);
    assert.equal(await statusOf(other.id), 'responded');
    const third = await newRequest({ email: 'kim@customer.test', personRef: 'cust-kim' });
    await plain.goto(`${base}/collect/opt-out`);
    await plain.fill('#code', third.linkUrl.split('#')[1]);
    await Promise.all([plain.waitForNavigation(), plain.getByRole('button', { name: 'Open' }).click()]);
    await plain.waitForSelector('[data-state="opted-out"]');
    await checkPage(plain, plainErrors, 'opted out without JavaScript', false);
    assert.equal(await statusOf(third.id), 'opted_out');
    await context.close();
    await nojs.close();
  });

  it('an upload cut off entirely survives a reload: the same upload resumes from its state', async () => {
    const context = await browser.newContext({ ...PHONE, permissions: ['camera', 'microphone'] });
    const page = await context.newPage();
    await page.goto(`${base}/collect/f/${t.publicId}`);
    await page.fill('#f-text', 'Recorded on a train.');
    await page.waitForSelector('#save-status:has-text("Saved")');
    await page.getByRole('button', { name: 'Record audio' }).click();
    await page.waitForSelector('#stop-recording');
    await page.waitForTimeout(1_500);
    await page.click('#stop-recording');
    await page.route('**/uploads/*?part=*', (route) => route.abort('internetdisconnected'));
    await page.getByRole('button', { name: 'Use this' }).click();
    await page.waitForSelector('#media-status:has-text("connection dropped")');
    const [{ id: uploadId }] = await ctx.dataSource.query(
      `SELECT u.id FROM collection_uploads u JOIN collection_drafts d ON d.id = u.draft_id WHERE d.flow_id = $1 AND d.fields->>'text' = 'Recorded on a train.'`,
      [t.flowId]);
    await page.unroute('**/uploads/*?part=*');
    await page.reload();
    assert.equal(await page.inputValue('#f-text'), 'Recorded on a train.', 'the typed text came back from the draft');
    await page.waitForSelector('[data-state="attached"]', { timeout: 60_000 });
    const [upload] = await ctx.dataSource.query(`SELECT status FROM collection_uploads WHERE id = $1`, [uploadId]);
    assert.equal(upload.status, 'complete', 'the upload opened before the reload is the one completed');
    await context.close();
  });

  it('the review and interview pages: approve quoted words, answer by text, finish', async () => {
    const draft = (await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: t.publicId } })).json().data;
    const ds = { 'x-draft-session': draft.draftSession };
    await customerCall({ method: 'PATCH', url: `/api/proof/collect/drafts/${draft.draft.id}`, headers: ds,
      payload: { text: 'It just works.', consentAccepted: true, answers: { [t.questionId]: 'Yes.' } } });
    const submitted = (await customerCall({ method: 'POST', url: `/api/proof/collect/drafts/${draft.draft.id}/submit`, headers: ds, payload: {} })).json().data;
    const version = await teammateEdits(t, submitted.proofItemId, 'It simply works.');
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(`${base}/collect/review#${submitted.controlToken}`);
    await page.waitForSelector(`[data-review="${version.id}"]`);
    assert.equal(new URL(page.url()).hash, '');
    await checkPage(page, errors, 'review');
    await shot(page, 'customer-review');
    await page.getByRole('button', { name: 'Approve these exact words' }).click();
    await page.waitForSelector('[data-state="empty"]');
    await checkPage(page, errors, 'review done');

    const made = await call(asTeammate(t.owner, {
      method: 'POST', url: '/api/workspace/proof/interviews',
      payload: { productId: t.product.id, proofItemId: submitted.proofItemId, questions: [{ text: 'What did you use before?' }, { text: 'What changed?' }] },
    }), app);
    assert.equal(made.statusCode, 201, made.body);
    const { interviewUrl } = made.json().data;
    assert.match(interviewUrl, new RegExp(`^${base}/collect/interview#iv_`));
    await page.goto(interviewUrl);
    await page.waitForSelector('[data-question="q1"]').catch(async (err) => {
      throw new Error(`${(err as Error).message}: ${await page.textContent('main')}`);
    });
    await checkPage(page, errors, 'interview');
    await shot(page, 'customer-interview');
    await page.fill('#ans-q1', 'Spreadsheets.');
    await page.locator('[data-question="q1"]').getByRole('button', { name: 'Save my answer' }).click();
    await page.waitForSelector('[data-question="q1"] .help');
    await page.getByRole('button', { name: 'I have finished' }).click();
    await page.waitForSelector('[data-state="finished"]');
    await checkPage(page, errors, 'interview finished');
    await context.close();
  });

  it('by keyboard alone: every control is reached with Tab, the story is answered and sent with keys', async () => {
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(`${base}/collect/f/${t.publicId}`);
    await page.waitForSelector('#media:not([hidden])');
    const reached = new Set<string>();
    for (let i = 0; i < 80; i += 1) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return el ? (el.id || el.getAttribute('name') || el.textContent?.trim() || el.tagName) : '';
      });
      reached.add(id);
      if (id === 'Send my story') break;
    }
    for (const control of ['rating', 'f-text', 'q-1', 'Record video', 'media-file', 'f-name', 'f-consent', 'Send my story']) {
      assert.ok(reached.has(control), `${control} is reached by Tab (reached: ${[...reached].join(', ')})`);
    }
    assert.ok(!reached.has('f-website'), 'the trap field for bots is not in the tab order');
    await page.focus('#f-text');
    await page.keyboard.type('Typed without a mouse.');
    await page.focus('#q-1');
    await page.keyboard.type('Keys only.');
    await page.focus('#f-consent');
    await page.keyboard.press('Space');
    assert.equal(await page.isChecked('#f-consent'), true);
    await page.focus('button[type="submit"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#thanks-h');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'thanks-h', 'focus moves to the confirmation');
    await checkPage(page, errors, 'thanks by keyboard');
    await context.close();
  });

  it('a stale revision is resolved without losing what was typed', async () => {
    const context = await browser.newContext(PHONE);
    const page = await context.newPage();
    await page.goto(`${base}/collect/f/${t.publicId}`);
    await page.fill('#f-text', 'First words.');
    await page.waitForSelector('#save-status:has-text("Saved")');
    const ref = JSON.parse((await page.evaluate((key) => sessionStorage.getItem(key), `draft:${t.publicId}`))!) as { id: string; session: string };
    const elsewhere = await customerCall({ method: 'PATCH', url: `/api/proof/collect/drafts/${ref.id}`, headers: { 'x-draft-session': ref.session },
      payload: { title: 'Saved elsewhere' } });
    assert.equal(elsewhere.statusCode, 200, elsewhere.body);
    await page.fill('#f-text', 'First words, and more typed here.');
    await page.waitForSelector('#save-status:has-text("kept what you typed")');
    const stored = (await customerCall({ method: 'GET', url: `/api/proof/collect/drafts/${ref.id}`, headers: { 'x-draft-session': ref.session } })).json()
      .data.draft;
    assert.equal(stored.text, 'First words, and more typed here.');
    assert.equal(await page.inputValue('#f-text'), 'First words, and more typed here.');
    await context.close();
  });

  it('a continuation link resumes the draft on another device; the screen is recorded only after its own consent', async () => {
    const draft = (await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: t.publicId } })).json().data;
    const ds = { 'x-draft-session': draft.draftSession };
    await customerCall({ method: 'PATCH', url: `/api/proof/collect/drafts/${draft.draft.id}`, headers: ds, payload: { text: 'Started on my laptop.' } });
    const continuation = (await customerCall({ method: 'POST', url: `/api/proof/collect/drafts/${draft.draft.id}/continuation`, headers: ds, payload: {} },
      app)).json().data;
    assert.match(continuation.continuationUrl, new RegExp(`^${base}/collect/continue#cl_`));
    const context = await browser.newContext({ ...PHONE, permissions: ['camera', 'microphone'] });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(continuation.continuationUrl);
    await page.waitForSelector('#story');
    assert.equal(new URL(page.url()).hash, '');
    assert.equal(await page.inputValue('#f-text'), 'Started on my laptop.');
    await page.reload();
    await page.waitForSelector('#story');
    assert.equal(await page.inputValue('#f-text'), 'Started on my laptop.', 'a reload keeps the draft though the link was single use');
    await checkPage(page, errors, 'continue');

    await page.getByRole('button', { name: 'Record my screen' }).click();
    assert.match((await page.textContent('#media-status'))!, /agree to share your screen/);
    assert.equal(await page.isVisible('#stop-recording'), false, 'nothing is recorded before the screen consent');
    await context.close();
  });

  it('a flow with a welcome video shows it (server-rendered, with and without JavaScript); its source answers 200', async () => {
    const w = await createCollectionTenant();
    const forms = `/api/proof/collect/forms/${w.flowId}/welcome-video`;
    // Bytes that sniff as MP4 (an ftyp box); the page never plays them (preload="none").
    const file = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41', 'latin1'),
      Buffer.alloc(70_000, 7)]);
    const started = await as(w.owner, { method: 'POST', url: forms, payload: { action: 'start_upload', size: file.length, sha256: sha256(file) } });
    assert.equal(started.statusCode, 201, started.body);
    const { video, uploadToken } = started.json().data;
    const put = await customerCall({ method: 'PUT', url: `${forms}/${video.id}?part=1`, payload: file,
      headers: { 'x-upload-token': uploadToken, 'content-type': 'application/octet-stream' } });
    assert.equal(put.statusCode, 200, put.body);
    await eventually(async () => (await as(w.owner, { method: 'POST', url: `${forms}/${video.id}`, payload: {} })).statusCode === 200);
    assert.equal((await as(w.owner, { method: 'POST', url: forms, payload: { action: 'review', videoId: video.id, decision: 'clear' } })).statusCode, 200);
    const form = (await as(w.owner, { method: 'GET', url: `/api/proof/collect/forms/${w.flowId}` })).json().data;
    const published = await as(w.owner, { method: 'POST', url: `/api/proof/collect/forms/${w.flowId}`, payload: { draftRevision: form.draftRevision } });
    assert.equal(published.statusCode, 201, published.body);

    const live = (await customerCall({ method: 'GET', url: `/api/proof/collect/flows/${w.publicId}` })).json().data;
    assert.deepEqual(live.welcomeVideo, { id: video.id, url: `/api/proof/collect/welcome/${video.id}` });
    const opened = (await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: w.publicId } })).json().data;
    assert.deepEqual(opened.flow, live, 'a draft answers the same flow object');

    for (const javaScriptEnabled of [true, false]) {
      const context = await browser.newContext({ ...PHONE, javaScriptEnabled });
      const page = await context.newPage();
      const errors = collectPageErrors(page);
      assert.equal((await page.goto(`${base}/collect/f/${w.publicId}`))?.status(), 200);
      const element = page.locator('video.welcome-video[controls][preload="none"]');
      assert.equal(await element.count(), 1);
      const src = await element.getAttribute('src');
      assert.equal(src, live.welcomeVideo.url);
      const served = await page.request.get(new URL(src!, base).toString());
      assert.equal(served.status(), 200);
      assert.equal(served.headers()['content-type'], 'video/mp4');
      if (javaScriptEnabled) await page.waitForSelector('#media:not([hidden])');
      await checkPage(page, errors, `live flow with a welcome video (JavaScript ${javaScriptEnabled ? 'on' : 'off'})`, javaScriptEnabled);
      await context.close();
    }
  });

  it('the interview page records an answer from the fake camera, uploads it and finishes', async () => {
    const draft = (await customerCall({ method: 'POST', url: '/api/proof/collect/drafts', payload: { flowId: t.publicId } })).json().data;
    const ds = { 'x-draft-session': draft.draftSession };
    await customerCall({ method: 'PATCH', url: `/api/proof/collect/drafts/${draft.draft.id}`, headers: ds,
      payload: { text: 'Recorded later.', consentAccepted: true, answers: { [t.questionId]: 'Yes.' } } });
    const submitted = (await customerCall({ method: 'POST', url: `/api/proof/collect/drafts/${draft.draft.id}/submit`, headers: ds, payload: {} })).json().data;
    const made = await call(asTeammate(t.owner, {
      method: 'POST', url: '/api/workspace/proof/interviews', payload: { productId: t.product.id, proofItemId: submitted.proofItemId,
        questions: [{ text: 'Show us how you use it.' }] },
    }), app);
    assert.equal(made.statusCode, 201, made.body);
    const { interviewUrl } = made.json().data;
    const token = new URL(interviewUrl).hash.slice(1);
    const context = await browser.newContext({ ...PHONE, permissions: ['camera', 'microphone'] });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(interviewUrl);
    const box = page.locator('[data-media-for="q1"]');
    await box.getByRole('button', { name: 'Record a video answer' }).click();
    await box.locator('video.live').waitFor();
    await page.waitForTimeout(2_000);
    await box.getByRole('button', { name: 'Stop recording' }).click();
    await box.locator('.status:has-text("Answered.")').waitFor({ timeout: 30_000 });
    const answered = (await customerCall({ method: 'GET', url: '/api/proof/interview', headers: { 'x-interview-token': token } })).json().data.interview;
    assert.match(answered.questions[0].answer?.mediaId ?? '', /^med_/, 'the recording is stored as the answer');
    await checkPage(page, errors, 'interview answered by recording');
    await page.getByRole('button', { name: 'I have finished' }).click();
    await page.waitForSelector('[data-state="finished"]');
    await context.close();
  });

  it('records the screen after its own consent (Chromium picks its fake screen) and attaches it with the screen capture', async () => {
    const screens = async () => (await ctx.dataSource.query(
      `SELECT count(*)::int AS n FROM collection_uploads u JOIN collection_drafts d ON d.id = u.draft_id
        WHERE d.flow_id = $1 AND u.capture->>'source' = 'screen' AND (u.capture->>'screenConsent')::boolean`, [t.flowId]))[0].n as number;
    const before = await screens();
    const context = await browser.newContext({ ...PHONE, permissions: ['camera', 'microphone'] });
    const page = await context.newPage();
    const errors = collectPageErrors(page);
    await page.goto(`${base}/collect/f/${t.publicId}`);
    await page.waitForSelector('#media:not([hidden])');
    await page.fill('#f-text', 'Here is how I set it up.');
    await page.waitForSelector('#save-status:has-text("Saved")');
    await page.check('#screen-consent');
    await page.getByRole('button', { name: 'Record my screen' }).click();
    await page.waitForSelector('#stop-recording');
    await page.waitForTimeout(2_000);
    await page.click('#stop-recording');
    await page.waitForSelector('.media-stage video[controls]');
    await page.getByRole('button', { name: 'Use this' }).click();
    await page.waitForSelector('[data-state="attached"]', { timeout: 60_000 });
    assert.equal(await screens(), before + 1, 'one upload recorded from the screen, with its consent');
    await checkPage(page, errors, 'screen recording attached');
    await context.close();
  });
});
