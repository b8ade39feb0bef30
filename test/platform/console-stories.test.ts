import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { FastifyInstance } from 'fastify';
import { Browser, Page } from 'playwright-core';
import { call, withKey } from '../support/fixtures';
import { SCREENSHOTS, assertAxeClean, ensureChromium } from '../support/browser';
import { ProofTenant, approvedItem, createProofTenant, submit } from '../support/proof-fixtures';
import { ConsoleHarness, consoleTabAs, openConsoleAsOwner } from '../support/console-session';

type Json = Record<string, any>;

describe('console: stories (consent, draft assets, raw export) in a real browser (spec rule 1: human-only actions)', function () {
  this.timeout(240_000);
  let t: ProofTenant;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let notFound: string[];

  const signedIn = (role: 'owner' | 'admin' | 'member') => consoleTabAs(browser, base, t.organizationId, role);

  /** A write with the tab's own session and CSRF token, as the console would send it; answers the HTTP status. */
  const writeAs = (tab: Page, url: string, body: unknown) => tab.evaluate(async ([u, b]) => {
    const session = await (await fetch('/api/workspace/session')).json() as { data: { csrfToken: string } };
    const res = await fetch(u as string, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': session.data.csrfToken }, body: JSON.stringify(b),
    });
    return res.status;
  }, [url, body]);

  const openStories = async (tab: Page) => {
    await tab.click('a[data-nav=stories]');
    await tab.waitForSelector('main[data-view=stories] #story-list table, main[data-view=stories] #story-list p');
  };

  let harness: ConsoleHarness | undefined;
  before(async function () {
    if (ensureChromium()) this.skip();
    t = await createProofTenant();
    harness = await openConsoleAsOwner(t.organizationId);
    ({ app, base, browser, page, errors, notFound } = harness);
  });
  after(async () => {
    await harness?.close();
  });

  it('records consent for an exact version from the console; the API then answers the new grant and the old one superseded', async () => {
    const s = await submit(t);
    await openStories(page);
    const row = `tr[data-item="${s.proofItemId}"]`;
    assert.match(await page.textContent(row) ?? '', /Faster onboarding[\s\S]*text[\s\S]*submitted/);
    await page.click(`${row} button[data-open]`);
    await page.waitForSelector(`section[data-story="${s.proofItemId}"]`);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'story-heading', 'the opened story has the focus');
    assert.match(await page.textContent(`li[data-version="${s.originalVersionId}"]`) ?? '', /Version 1 \(original\)[\s\S]*We cut onboarding from 9 days to 2\./);
    assert.match(await page.textContent(`li[data-grant="${s.consentGrantId}"]`) ?? '', /^active for version 1: channels website, in_app, email/);

    const form = '#consent-form';
    await page.selectOption(`${form} select[name=versionId]`, s.originalVersionId);
    await page.selectOption(`${form} select[name=displayMode]`, 'first_name');
    await page.uncheck(`${form} input[name=identityFields][value=title]`);
    await page.check(`${form} input[name=channels][value=paid_ads]`);
    await page.check(`${form} input[name=channels][value=case_study]`);
    await page.check(`${form} input[name=products][value=own]`);
    await page.fill(`${form} input[name=geography]`, 'DE, FR');
    await page.fill(`${form} input[name=validUntil]`, '2031-06-30');
    await page.check(`${form} input[name=paidUseAllowed]`);
    await assertAxeClean(page, 'stories: consent form');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('#stories-status .notice:has-text("Consent recorded for version 1")');

    const consent = (await call(withKey(t.key, { method: 'GET', url: `/api/v1/proof/items/${s.proofItemId}/consent` }), app)).json().data;
    const [fresh, old] = consent.grants as Json[];
    assert.equal(old.id, s.consentGrantId);
    assert.equal(old.state, 'superseded');
    assert.deepEqual(
      [fresh.state, fresh.approvedVersionId, fresh.displayMode, fresh.identityFields, fresh.channels, fresh.products, fresh.media, fresh.paidUseAllowed,
        fresh.translationAllowed, fresh.geography, fresh.validUntil, fresh.customerApprovedWording],
      ['active', s.originalVersionId, 'first_name', ['name', 'company'], ['website', 'paid_ads', 'case_study'], { ids: [t.product.id] }, ['text'], true,
        false, ['DE', 'FR'], '2031-06-30T23:59:59.999Z', true],
    );
    assert.match(await page.textContent('#stories-status') ?? '', new RegExp(fresh.id));
    assert.match(await page.textContent(`li[data-grant="${fresh.id}"]`) ?? '',
      /^active for version 1: channels website, paid_ads, case_study; shown as first_name; paid use allowed; valid until/);
    assert.match(await page.textContent(`li[data-grant="${s.consentGrantId}"]`) ?? '', /^superseded/);
  });

  it('approves a draft quote card from the console; the API answers it approved', async () => {
    const item = await approvedItem(t);
    const card = await call(withKey(t.key, {
      method: 'POST', url: '/api/v1/proof/assets/generate', payload: { proofItemId: item.proofItemId, channel: 'website' },
    }), app);
    assert.equal(card.statusCode, 201, card.body);
    const assetId = card.json().data.id as string;

    await openStories(page);
    const draft = `li[data-asset="${assetId}"]`;
    await page.waitForSelector(draft);
    assert.match(await page.textContent(draft) ?? '', new RegExp(`quote card ${assetId}[\\s\\S]*We cut onboarding from 9 days to 2\\.[\\s\\S]*quotes ${item.proofItemId}`));
    await assertAxeClean(page, 'stories: draft assets');
    await page.click(`${draft} button[data-approve-asset]`);
    await page.waitForSelector(`#stories-status .notice:has-text("Approved ${assetId}")`);
    await page.waitForSelector(draft, { state: 'detached' });
    const read = await call(withKey(t.key, { method: 'GET', url: `/api/v1/proof/assets/${assetId}` }), app);
    assert.equal(read.json().data.approvalState, 'approved');
  });

  it('exports raw originals as the owner: the download parses and its digest is the sha256 of the bundle\'s canonical JSON', async () => {
    await openStories(page);
    await page.fill('#raw-export input[name=productId]', t.product.id);
    await page.click('#raw-export button[type=submit]');
    const link = await page.waitForSelector('a[data-field=raw-download]');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.field), 'raw-download', 'the download link has the focus');
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    assert.equal(download.suggestedFilename(), `raw-originals-${t.product.id}.json`);
    const exported = JSON.parse(fs.readFileSync((await download.path())!, 'utf8')) as { bundle: Json; digest: Json };
    assert.equal(exported.bundle.format, 'service-proof-raw-export-v1');
    assert.equal(exported.bundle.productId, t.product.id);
    assert.equal(exported.bundle.originals.length, 2, 'both stories\' originals');
    assert.ok(exported.bundle.originals.every((v: Json) => v.isOriginal));
    assert.deepEqual([exported.digest.algorithm, exported.digest.canonicalization], ['sha256', 'RFC8785']);
    assert.equal(exported.digest.value, createHash('sha256').update(canonicalize(exported.bundle)!).digest('hex'));
    assert.equal(await page.textContent('[data-field=digest]'), exported.digest.value, 'the page shows the same digest');
    await assertAxeClean(page, 'stories: raw export');
    await page.click('#story-list tr:last-child button[data-open]');
    await page.waitForSelector('section.story-detail .grants');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-stories.png'), fullPage: true });
  });

  it('an admin records consent and approves but is not offered the raw export, which the API refuses; a member only reads', async () => {
    const s = await submit(t);
    const admin = await signedIn('admin');
    await openStories(admin.page);
    await admin.page.click(`tr[data-item="${s.proofItemId}"] button[data-open]`);
    await admin.page.waitForSelector('#consent-form');
    assert.equal(await admin.page.$('#raw-export'), null, 'no raw export for an admin');
    assert.match(await admin.page.textContent('main') ?? '', /Only the owner exports raw originals\./);
    assert.equal(await writeAs(admin.page, '/api/workspace/proof/exports/raw', { productId: t.product.id }), 403, 'the API refuses the admin\'s export');
    await admin.context.close();

    const member = await signedIn('member');
    await openStories(member.page);
    await member.page.click(`tr[data-item="${s.proofItemId}"] button[data-open]`);
    await member.page.waitForSelector(`section[data-story="${s.proofItemId}"] .grants`);
    assert.equal(await member.page.$('#consent-form'), null, 'no consent form for a member');
    assert.equal(await member.page.$('#raw-export'), null);
    assert.match(await member.page.textContent('main') ?? '', /Your role \(member\) may read this view/);
    await assertAxeClean(member.page, 'stories: member');
    const consent = { versionId: s.originalVersionId, consent: {
      displayMode: 'anonymous', identityFields: [], channels: ['website'], products: { all: true }, media: ['text'], paidUseAllowed: false,
      translationAllowed: false, geography: ['*'], validUntil: null, customerApprovedWording: true,
    } };
    assert.equal(await writeAs(member.page, `/api/workspace/proof/items/${s.proofItemId}/consents`, consent), 403, 'the API refuses the member\'s consent');
    await member.context.close();
  });

  it('left no page error and asked for nothing that is not there', () => {
    assert.deepEqual(notFound.filter((p) => p !== '/favicon.ico'), []);
    assert.deepEqual(errors.filter((e) => !/status of 40[134]/.test(e)), []);
  });
});
