import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import zlib from 'node:zlib';
import { FastifyInstance } from 'fastify';
import { Browser, Page } from 'playwright-core';
import canonicalize from 'canonicalize';
import { activeSigningKey, signText } from '../../db/proof/proof-signing';
import { WEB_DIST } from '../../web/manifest';
import { call, eventually, listenOnLoopback, withKey } from '../support/fixtures';
import { PlacementTenant, approvedItem, createPlacement, createPlacementTenant, publishedPlacement, submissionBody } from '../support/proof-fixtures';
import { ctx } from '../support/root-hooks';
import { PHONE, collectPageErrors, ensureChromium, launchChromium, seriousViolations } from '../support/browser';

const WALL_BUDGET_BYTES = 15 * 1024;

const story = (name: string, text: string, extra: Record<string, unknown> = {}) => {
  const body = submissionBody();
  return { ...body, content: { ...body.content, text, attribution: { name, company: 'Analytical Ltd', title: 'CTO' } }, ...extra };
};

/** A site on another origin: a page that pastes the two lines, and one that frames the HTML form. */
async function hostSite(base: string): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const placement = new URL(req.url ?? '/', 'http://host').searchParams.get('placement') ?? '';
    const frame = req.url?.startsWith('/frame');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Acme</title><style>body{font-family:system-ui;margin:1rem} sv-proof-wall{--sv-wall-accent:#5b21b6}</style></head>
<body><main><h1>Acme customers</h1>${frame
    ? `<iframe title="Customer stories" src="${base}/embed/wall/${placement}" width="360" height="600"></iframe>`
    : `<script type="module" src="${base}/embed/wall.js"></script>\n<sv-proof-wall placement="${placement}"></sv-proof-wall>`}</main></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const wallItems = (page: Page) => page.locator('sv-proof-wall .sv-item');

async function engagement(tenant: PlacementTenant, placementId: string): Promise<Record<string, Record<string, number>>> {
  const items = (await call(withKey(tenant.readKey, { method: 'GET', url: `/api/v1/proof/placements/${placementId}/items` }))).json().data;
  return Object.fromEntries(items.map((i: { proofItemId: string; engagement: Record<string, number> }) => [i.proofItemId, i.engagement]));
}

describe('proof: the wall on another site (real Chromium)', function () {
  this.timeout(180_000);
  let tenant: PlacementTenant;
  let app: FastifyInstance;
  let base: string;
  let host: { origin: string; close: () => Promise<void> };
  let browser: Browser;

  before(async function () {
    if (ensureChromium()) this.skip();
    tenant = await createPlacementTenant();
    app = await ctx.buildApp();
    base = await listenOnLoopback(app);
    host = await hostSite(base);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await host?.close();
    await app?.close();
  });

  it('serves the script at its stable URL (CORS, ETag, short cache) within its gzip budget', async () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(WEB_DIST, 'manifest.json'), 'utf8')) as Record<string, string>;
    const built = fs.readFileSync(path.join(WEB_DIST, manifest['wall.js']));
    const gzipped = zlib.gzipSync(built).length;
    console.log(`      wall script: ${built.length} bytes, ${gzipped} bytes gzip (budget ${WALL_BUDGET_BYTES})`);
    assert.ok(gzipped <= WALL_BUDGET_BYTES, `the wall script is ${gzipped} bytes gzip`);
    const res = await fetch(`${base}/embed/wall.js`, { headers: { origin: host.origin } });
    assert.equal(res.status, 200);
    assert.equal(Buffer.from(await res.arrayBuffer()).compare(built), 0, 'the built file');
    assert.match(res.headers.get('content-type')!, /^text\/javascript/);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
    const etag = res.headers.get('etag')!;
    assert.equal((await fetch(`${base}/embed/wall.js`, { headers: { 'if-none-match': etag } })).status, 304);
  });

  it('shows the placement\'s verified items on another origin, counts each beacon once, passes axe, and a revocation removes the item on the next load',
    async () => {
      const ada = await approvedItem(tenant, story('Ada Lovelace', 'We cut onboarding from 9 days to 2.'));
      const grace = await approvedItem(tenant, story('Grace Hopper', 'Support answered within the hour.', {
        incentive: { offered: true, description: 'a $20 gift card' },
      }));
      const placementId = await publishedPlacement(tenant, [ada.proofItemId, grace.proofItemId], { renderConfig: { allowedOrigins: [host.origin] } });
      const context = await browser.newContext(PHONE);
      const page = await context.newPage();
      const errors = collectPageErrors(page);
      await page.goto(`${host.origin}/?placement=${placementId}`);
      await eventually(async () => (await wallItems(page).count()) === 2);
      const first = wallItems(page).nth(0);
      assert.match(await first.textContent() ?? '', /We cut onboarding from 9 days to 2\./);
      assert.equal(await first.locator('.sv-by-name').textContent(), 'Ada Lovelace');
      assert.equal(await first.locator('.sv-by-company').textContent(), 'Analytical Ltd');
      assert.match(await first.locator('.sv-labels').textContent() ?? '', /Verified customer/);
      assert.match(await wallItems(page).nth(1).locator('.sv-labels').textContent() ?? '', /Incentivized: a \$20 gift card/);
      const receipt = (await call({ method: 'GET', url: `/api/public/proof/render/${placementId}` })).json().manifest.items[0].receiptId;
      assert.equal(await first.locator('a.sv-verify').getAttribute('href'), `${base}/embed/verify/${receipt}`);
      // Keyboard: the verify links are reached by Tab, in order.
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.querySelector('sv-proof-wall')!.shadowRoot!.activeElement?.className), 'sv-verify');
      assert.deepEqual(errors, []);
      assert.deepEqual(await seriousViolations(page), []);
      await page.screenshot({ path: 'docs/screenshots/wall.png' });
      const animation = () => page.evaluate(() =>
        getComputedStyle(document.querySelector('sv-proof-wall')!.shadowRoot!.querySelector('.sv-item')!).animationName);
      assert.equal(await animation(), 'sv-in');
      await page.emulateMedia({ reducedMotion: 'reduce' });
      assert.equal(await animation(), 'none', 'no motion under prefers-reduced-motion');

      // Impressions arrive as cookie-free beacons; a second visit counts nothing more the same day.
      const counts = await eventually(async () => {
        const now = await engagement(tenant, placementId);
        return now[ada.proofItemId]?.impression === 1 && now[grace.proofItemId]?.impression === 1 ? now : null;
      });
      assert.equal(counts[ada.proofItemId].click, undefined);
      const [popup] = await Promise.all([context.waitForEvent('page'), first.locator('a.sv-verify').click()]);
      await popup.waitForLoadState();
      assert.match(await popup.textContent('.sv-verdict') ?? '', /may be shown/);
      await popup.close();
      await eventually(async () => (await engagement(tenant, placementId))[ada.proofItemId]?.click === 1);
      await page.reload();
      await eventually(async () => (await wallItems(page).count()) === 2);
      await new Promise((r) => setTimeout(r, 500));
      assert.deepEqual(await engagement(tenant, placementId), {
        [ada.proofItemId]: { impression: 1, click: 1 }, [grace.proofItemId]: { impression: 1 },
      });

      const revoked = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${ada.proofItemId}/revoke`, payload: {} }));
      assert.equal(revoked.statusCode, 202, revoked.body);
      await page.reload();
      await eventually(async () => (await wallItems(page).count()) === 1);
      assert.match(await wallItems(page).nth(0).textContent() ?? '', /Support answered within the hour/);
      const verify = await context.newPage();
      await verify.goto(`${base}/embed/verify/${receipt}`);
      assert.match(await verify.textContent('.sv-verdict') ?? '', /may not be shown/);
      assert.deepEqual(await seriousViolations(verify), []);
      await context.close();
    });

  it('renders nothing from a manifest altered in transit or expired, and says why in the console', async () => {
    const item = await approvedItem(tenant, story('Ada Lovelace', 'Exports take seconds now.'));
    const placementId = await publishedPlacement(tenant, [item.proofItemId]);
    const renderUrl = `${base}/api/public/proof/render/${placementId}`;
    const key = await activeSigningKey(ctx.dataSource);
    const cases: Array<{ alter: (body: { manifest: Record<string, unknown>; signature: unknown }) => string; why: RegExp }> = [
      {
        alter: (body) => JSON.stringify(body).replace('Exports take seconds now.', 'Exports are instant, and free.'),
        why: /signature does not verify/,
      },
      {
        // Signed by the service's own key, so only the expiry can refuse it.
        alter: (body) => {
          const manifest = { ...body.manifest, expiresAt: '2020-01-01T00:00:00.000Z' };
          return JSON.stringify({ manifest, signature: signText(key, canonicalize(manifest)!) });
        },
        why: /expired/,
      },
    ];
    for (const { alter, why } of cases) {
      const page = await browser.newPage();
      const errors = collectPageErrors(page);
      await page.route(renderUrl, async (route) => {
        const original = await route.fetch();
        await route.fulfill({ response: original, body: alter(await original.json()) });
      });
      await page.goto(`${host.origin}/?placement=${placementId}`);
      await eventually(async () => errors.length > 0);
      assert.match(errors.join('\n'), why);
      assert.match(errors[0], new RegExp(`placement="${placementId}"`));
      assert.equal(await page.evaluate(() => document.querySelector('sv-proof-wall')!.shadowRoot!.childNodes.length), 0, 'nothing rendered');
      await page.close();
    }
  });

  it('the HTML form shows the same items without JavaScript, framed only by the placement\'s origins', async () => {
    const ada = await approvedItem(tenant, story('Ada Lovelace', 'Reports went from a day to a minute.'));
    const grace = await approvedItem(tenant, story('Grace Hopper', 'Setup took an afternoon.'));
    const placementId = await publishedPlacement(tenant, [ada.proofItemId, grace.proofItemId], { renderConfig: { allowedOrigins: [host.origin] } });
    const context = await browser.newContext({ ...PHONE, javaScriptEnabled: false });
    const page = await context.newPage();
    const response = await page.goto(`${base}/embed/wall/${placementId}`);
    const csp = response!.headers()['content-security-policy'];
    assert.match(csp, new RegExp(`frame-ancestors ${host.origin.replace(/\./g, '\\.')}(;|$)`));
    assert.match(csp, /script-src 'none'/);
    assert.equal(response!.headers()['cache-control'], 'no-cache');
    assert.equal(await page.locator('.sv-item').count(), 2);
    assert.match(await page.locator('.sv-item').nth(0).textContent() ?? '', /Reports went from a day to a minute\./);
    const manifest = (await call({ method: 'GET', url: `/api/public/proof/render/${placementId}` })).json().manifest;
    assert.equal(await page.locator('.sv-item a.sv-verify').nth(1).getAttribute('href'), `/embed/verify/${manifest.items[1].receiptId}`);
    await context.close();
    // axe runs as page script, so it looks at the same page in a context that runs scripts (the page itself runs none).
    const checked = await browser.newPage({ ...PHONE });
    await checked.goto(`${base}/embed/wall/${placementId}`);
    assert.deepEqual(await seriousViolations(checked), []);
    await checked.screenshot({ path: 'docs/screenshots/wall-html.png' });
    await checked.close();

    // Framed by the allowed origin it renders; a pause empties it on the next load.
    const framing = await browser.newPage();
    await framing.goto(`${host.origin}/frame?placement=${placementId}`);
    const frame = framing.frameLocator('iframe');
    await eventually(async () => (await frame.locator('.sv-item').count()) === 2);
    const revoked = await call(withKey(tenant.key, { method: 'POST', url: `/api/v1/proof/items/${ada.proofItemId}/revoke`, payload: {} }));
    assert.equal(revoked.statusCode, 202, revoked.body);
    await framing.reload();
    await eventually(async () => (await frame.locator('.sv-item').count()) === 1);
    assert.match(await frame.locator('.sv-item').textContent() ?? '', /Setup took an afternoon/);
    const paused = await call(withKey(tenant.publishKey, { method: 'PATCH', url: `/api/v1/proof/placements/${placementId}`, payload: { state: 'paused' } }));
    assert.equal(paused.statusCode, 200, paused.body);
    await framing.reload();
    await eventually(async () => (await frame.locator('.sv-item').count()) === 0 && (await frame.locator('h1').count()) === 1);
    await framing.close();

    // No configured origin: nobody may frame it.
    const unlisted = await publishedPlacement(tenant, [grace.proofItemId]);
    const res = await call({ method: 'GET', url: `/embed/wall/${unlisted}` });
    assert.equal(res.statusCode, 200);
    assert.match(res.headers['content-security-policy'] as string, /frame-ancestors 'none'/);
    for (const url of ['/embed/wall/plc_unknown', '/embed/wall/..%2Fx', '/embed/verify/rcpt_unknown']) {
      const missing = await call({ method: 'GET', url });
      assert.equal(missing.statusCode, 404, url);
      assert.match(missing.headers['content-type'] as string, /text\/html/);
    }
  });

  it('refuses framing origins that are not https (or loopback http)', async () => {
    for (const origin of ['http://shop.example', 'https://shop.example/path', "https://a.example 'unsafe-inline'", 'javascript:alert(1)']) {
      const res = await call(withKey(tenant.publishKey, {
        method: 'POST', url: '/api/v1/proof/placements',
        payload: { name: 'Wall', placementType: 'wall', channel: 'website', renderConfig: { allowedOrigins: [origin] } },
      }));
      assert.equal(res.statusCode, 400, origin);
    }
    const ok = await createPlacement(tenant, { renderConfig: { allowedOrigins: ['https://shop.example', 'http://localhost:8080'], theme: 'dark' } });
    assert.deepEqual(ok.renderConfig, { allowedOrigins: ['https://shop.example', 'http://localhost:8080'], theme: 'dark' });
  });
  it('the HTML form is limited per visitor address like the public API', async () => {
    const limited = await ctx.buildApp({ publicRateLimitPerMinute: 2 });
    try {
      const placementId = await publishedPlacement(tenant, [(await approvedItem(tenant, story('Ada Lovelace', 'Fast.'))).proofItemId]);
      const visit = (remoteAddress: string) => limited.inject({ method: 'GET', url: `/embed/wall/${placementId}`, remoteAddress });
      for (let i = 0; i < 2; i++) assert.equal((await visit('198.51.100.8')).statusCode, 200);
      const refused = await visit('198.51.100.8');
      assert.equal(refused.statusCode, 429);
      assert.ok(refused.headers['retry-after']);
      assert.equal((await visit('203.0.113.8')).statusCode, 200, 'another visitor is not held back');
    } finally {
      await limited.close();
    }
  });
});
