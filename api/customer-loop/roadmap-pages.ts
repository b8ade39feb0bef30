import { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Feed } from 'feed';
import { html } from '../../web/shared/html';
import { pageShell } from '../../web/shared/page-shell';
import { messages } from '../../web/roadmap/messages';
import { Roadmap, changelogPage, roadmapPage } from '../../web/roadmap/roadmap-markup';
import type { AppDeps } from '../app-deps';
import { sendPage } from '../plugins/web-pages';

const ID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The public roadmap pages (PAGES.md §7): the board, the changelog and its Atom feed, server-rendered from
 * the public API (`app.inject`), readable without JavaScript; the board's script adds votes and follows.
 */
export async function roadmapPageRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  // Atom needs absolute links: the service's public origin, as in the links it e-mails.
  const origin = new URL(deps.config.collectPageUrl).origin;
  const styles = [app.webAsset('roadmap.css')].filter((s): s is string => s !== null);
  const script = app.webAsset('roadmap.js');

  // Each read is counted against the visitor's own address by the public rate limit, not against this process's.
  async function load(productId: string, visitor: FastifyRequest): Promise<Roadmap | null> {
    if (!ID.test(productId)) return null;
    const res = await app.inject({ method: 'GET', url: `/api/public/roadmap/${productId}`, remoteAddress: visitor.ip });
    return res.statusCode === 200 ? (res.json() as { data: Roadmap }).data : null;
  }

  const notFound = (reply: FastifyReply) => sendPage(reply.code(404),
    pageShell({ lang: messages.lang, title: messages.notFound, body: html`<h1>${messages.notFound}</h1>`, styles }), { scripts: false });

  /**
   * One feature's public address is the board with `?feature={featureId}`. A merged feature's address answers
   * 301 to its survivor's (the fragment, which may hold the token, goes along); never cached, so an unmerge
   * takes the redirect back. An id the board does not stand for is 404.
   */
  app.get<{ Params: { productId: string }; Querystring: { feature?: string | string[] } }>('/roadmap/:productId', { config: { hidden: true } },
    async (request, reply) => {
      const roadmap = await load(request.params.productId, request);
      if (!roadmap) return notFound(reply);
      const asked = request.query.feature;
      const linked = typeof asked === 'string' && ID.test(asked) ? asked : undefined;
      if (asked !== undefined) {
        const feature = linked ? await app.inject({ method: 'GET', url: `/api/public/roadmap/${roadmap.product.id}/features/${linked}`, remoteAddress: request.ip }) : null;
        if (feature?.statusCode !== 200) {
          return sendPage(reply.code(404), pageShell({
            lang: messages.lang, title: messages.featureNotFound, styles,
            body: html`<h1>${messages.featureNotFound}</h1><p><a href="/roadmap/${roadmap.product.id}">${messages.backToBoard}</a></p>`,
          }), { scripts: false });
        }
        const survivor = (feature.json() as { data: { id: string } }).data.id;
        if (survivor !== linked) {
          return reply.code(301).header('cache-control', 'no-store')
            .header('location', `/roadmap/${encodeURIComponent(roadmap.product.id)}?feature=${encodeURIComponent(survivor)}`).send();
        }
      }
      // The fragment may carry an end-user token: no Referer leaves the page, nothing caches it.
      return sendPage(reply, pageShell({
        lang: messages.lang, title: messages.title(roadmap.product.name), body: roadmapPage(roadmap, linked), styles,
        scripts: script ? [script] : [], data: { productId: roadmap.product.id },
      }), { secret: true });
    });

  app.get<{ Params: { productId: string } }>('/roadmap/:productId/changelog', { config: { hidden: true } }, async (request, reply) => {
    const roadmap = await load(request.params.productId, request);
    if (!roadmap) return notFound(reply);
    return sendPage(reply.header('cache-control', 'no-cache'), pageShell({
      lang: messages.lang, title: messages.changelogTitle(roadmap.product.name), body: changelogPage(roadmap), styles,
    }), { scripts: false });
  });

  app.get<{ Params: { productId: string } }>('/roadmap/:productId/changelog.atom', { config: { hidden: true } }, async (request, reply) => {
    const roadmap = await load(request.params.productId, request);
    if (!roadmap) return notFound(reply);
    const board = `${origin}/roadmap/${roadmap.product.id}`;
    const feed = new Feed({
      title: messages.feedTitle(roadmap.product.name),
      id: `${board}/changelog`,
      link: `${board}/changelog`,
      language: messages.lang,
      updated: roadmap.releases[0] ? new Date(roadmap.releases[0].publishedAt) : new Date(0),
      generator: 'Customer Loop and Proof Service',
      feedLinks: { atom: `${board}/changelog.atom` },
    });
    for (const release of roadmap.releases) {
      feed.addItem({
        title: release.title,
        id: `${board}/changelog#${release.id}`,
        link: `${board}/changelog#${release.id}`,
        date: new Date(release.publishedAt),
        published: new Date(release.publishedAt),
        description: release.features.map((f) => f.title).join(', '),
        content: html`<ul>${release.features.map((f) => html`<li><strong>${f.title}</strong>${f.problem ? html`: ${f.problem}` : ''}</li>`)}</ul>`.text,
      });
    }
    return reply.type('application/atom+xml; charset=utf-8').header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff').send(feed.atom1());
  });
}
