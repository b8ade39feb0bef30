import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { embedOriginsOf } from '../../db/rules/embed-origins';
import { currentRender } from '../../db/proof/proof-render';
import { WEB_DIST } from '../../web/manifest';
import { SafeHtml, html } from '../../web/shared/html';
import { pageShell } from '../../web/shared/page-shell';
import { messages } from '../../web/wall/messages';
import { WALL_CSS } from '../../web/wall/wall-css';
import { WallManifest, wallMarkup } from '../../web/wall/wall-markup';
import type { AppDeps } from '../app-deps';
import { sendPage } from '../plugins/web-pages';

/** The stable URL is what a site pastes; it changes bytes on a deploy, so caches keep it only briefly. */
const SCRIPT_CACHE = 'public, max-age=300';
const ID = /^[A-Za-z0-9_-]{1,100}$/;

interface StaticFile { body: Buffer | string; etag: string; type: string }

interface WallPage { etag: string; html: string; frameAncestors: ReturnType<typeof embedOriginsOf> }
const PAGE_CACHE_LIMIT = 1_000;

const etagOf = (body: Buffer | string) => `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** The built wall script under its stable name (read once: the build does not change under a running process). */
function wallScript(app: FastifyInstance): StaticFile | null {
  const asset = app.webAsset('wall.js');
  if (!asset) return null;
  const body = fs.readFileSync(path.join(WEB_DIST, path.basename(asset)));
  return { body, etag: etagOf(body), type: 'text/javascript; charset=utf-8' };
}

function sendStatic(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  reply
    .header('etag', file.etag)
    .header('cache-control', SCRIPT_CACHE)
    // A module script from another origin is fetched in CORS mode; it carries no credential and reads nothing.
    .header('access-control-allow-origin', '*')
    .header('x-content-type-options', 'nosniff');
  const ifNoneMatch = request.headers['if-none-match'];
  if (ifNoneMatch && ifNoneMatch.split(',').some((t) => t.trim() === file.etag)) return reply.code(304).send();
  return reply.type(file.type).send(file.body);
}

function notLivePage(reply: FastifyReply, title: string, text: string): FastifyReply {
  return sendPage(reply.code(404).header('cache-control', 'no-cache'),
    pageShell({ lang: messages.lang, title, body: html`<h1>${title}</h1><p>${text}</p>`, styles: ['/embed/wall.css'] }),
    { scripts: false });
}

const row = (term: string, value: SafeHtml | string) => html`<div class="sv-row"><dt>${term}</dt><dd>${value}</dd></div>`;

/**
 * The wall for sites (docs/proof.md#the-wall): the custom element's script at its stable URL, the same wall as
 * server-rendered HTML for an iframe, no-JS visitors and search engines, and the page a verify link opens.
 * The wall page is built from the manifest the public render decides (`currentRender`), so it shows exactly what
 * the signed manifest allows; the verify page reads the public API (`app.inject`).
 */
export async function wallPageRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const script = wallScript(app);
  const style: StaticFile = { body: WALL_CSS, etag: etagOf(WALL_CSS), type: 'text/css; charset=utf-8' };

  app.get('/embed/wall.js', { config: { hidden: true } }, async (request, reply) =>
    (script ? sendStatic(request, reply, script) : reply.callNotFound()));

  app.get('/embed/wall.css', { config: { hidden: true } }, async (request, reply) => sendStatic(request, reply, style));

  // The page of each placement's last manifest, by the manifest's ETag: the page is a function of the manifest alone.
  const pages = new Map<string, WallPage>();
  // Limited per visitor as the public API is: the page decides eligibility afresh on every load.
  app.get<{ Params: { placementId: string } }>('/embed/wall/:placementId', { config: { hidden: true, rateLimit: {} } }, async (request, reply) => {
    const { placementId } = request.params;
    // The public render's own decision (the manifest the render route would send now, decided afresh).
    const render = ID.test(placementId) ? await currentRender(deps.dataSource, placementId) : null;
    if (!render) return notLivePage(reply, messages.notFoundTitle, messages.notFound);
    let page = pages.get(placementId);
    if (page?.etag !== render.etag) {
      const manifest = (JSON.parse(render.body()) as { manifest: WallManifest }).manifest;
      const body = html`<h1 class="sv-visually-hidden">${messages.frameTitle}</h1>${wallMarkup(manifest, null)}`;
      page = {
        etag: render.etag,
        html: pageShell({ lang: messages.lang, title: messages.frameTitle, body, styles: ['/embed/wall.css'] }),
        frameAncestors: embedOriginsOf(manifest.placement.renderConfig),
      };
      pages.delete(placementId);
      if (pages.size >= PAGE_CACHE_LIMIT) pages.delete(pages.keys().next().value!);
      pages.set(placementId, page);
    }
    // Every load decides eligibility afresh (a revoked item is gone on the next one): revalidate, never reuse.
    return sendPage(reply.header('cache-control', 'no-cache'), page.html, { scripts: false, frameAncestors: page.frameAncestors });
  });

  app.get<{ Params: { receiptId: string } }>('/embed/verify/:receiptId', { config: { hidden: true } }, async (request, reply) => {
    const { receiptId } = request.params;
    const read = ID.test(receiptId) ? await app.inject({ method: 'GET', url: `/api/public/proof/receipts/${receiptId}`, remoteAddress: request.ip }) : null;
    if (read?.statusCode !== 200) return notLivePage(reply, messages.verifyTitle, messages.verifyUnknown);
    const claim = (read.json() as { data: { receipt: Record<string, unknown>; signature: unknown } }).data;
    const checked = await app.inject({ method: 'POST', url: '/api/public/proof/receipts/verify', payload: claim, remoteAddress: request.ip });
    const result = (checked.json() as { data: { signatureValid: boolean; status: string | null; valid: boolean; checkedAt: string } }).data;
    const receipt = claim.receipt as { issuedAt?: string; contentHash?: string; terms?: { channels?: string[]; displayMode?: string } };
    const body = html`<article class="sv-verification"><h1>${messages.verifyTitle}</h1><p>${messages.verifyIntro}</p>
<p class="sv-verdict" data-valid="${String(result.valid)}"><strong>${result.valid ? messages.verifyVerdictValid : messages.verifyVerdictInvalid}</strong></p>
<dl class="sv-facts">
${row(messages.verifySignature, result.signatureValid ? messages.verifySignatureValid : messages.verifySignatureInvalid)}
${row(messages.verifyStatus, html`<span data-field="status">${messages.verifyStatusText[result.status ?? ''] ?? result.status ?? ''}</span>`)}
${row(messages.verifyChecked, result.checkedAt)}
${row(messages.verifyIssued, receipt.issuedAt ?? '')}
${row(messages.verifyWording, html`<code>${receipt.contentHash ?? ''}</code>`)}
${row(messages.verifyChannels, (receipt.terms?.channels ?? []).join(', '))}
${row(messages.verifyDisplay, receipt.terms?.displayMode ?? '')}
</dl>
<p><a href="/api/public/proof/receipts/${receiptId}">${messages.verifyReceipt}</a> · <a href="/api/public/proof/receipts/keys">${messages.verifyKeys}</a></p></article>`;
    return sendPage(reply.header('cache-control', 'no-store'),
      pageShell({ lang: messages.lang, title: messages.verifyTitle, body, styles: ['/embed/wall.css'] }), { scripts: false });
  });
}
