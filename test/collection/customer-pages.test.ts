import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { FastifyInstance } from 'fastify';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { WEB_DIST } from '../../web/build';
import { ctx } from '../support/root-hooks';
import { call, withKey } from '../support/fixtures';
import { freePort } from '../support/servers';
import { approve, publishedPlacement, requestApproval } from '../support/proof-fixtures';
import { CollectionTenant, WORDING, createCollectionTenant, customerCall } from '../support/collection';
import { PHONE, collectPageErrors, ensureChromium, launchChromiumWithMedia, seriousViolations } from '../support/browser';

const SHOTS = path.join(__dirname, '../../docs/screenshots');

/** No serious or critical axe-core violation, no horizontal scroll, no script error: on every page and state reached. */
async function checkPage(page: Page, errors: string[], what: string) {
  const violations = await seriousViolations(page);
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

const renderOf = async (placementId: string) => (await call({ method: 'GET', url: `/api/public/proof/render/${placementId}` })).json().manifest.items as Array<{ proofItemId: string; content: { text?: string } }>;

/** A teammate edits the story's words: a new version the customer must approve. */
async function teammateEdits(t: CollectionTenant, proofItemId: string, text: string) {
  const edited = await call(withKey(t.key, {
    method: 'POST', url: `/api/v1/proof/items/${proofItemId}/versions`, payload: { content: { text, title: 'Faster onboarding' }, changeReason: 'tightened wording' },
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
  let browser: Browser;

  before(async function () {
    if (ensureChromium()) this.skip();
    fs.mkdirSync(SHOTS, { recursive: true });
    t = await createCollectionTenant();
    ({ base } = await appOnPort());
    browser = await launchChromiumWithMedia();
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
});
