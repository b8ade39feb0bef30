import { FastifyInstance, FastifyReply } from 'fastify';
import type { AppDeps } from '../app-deps';
import { sendPage } from '../plugins/web-pages';
import { html } from '../../web/shared/html';
import { pageShell } from '../../web/shared/page-shell';
import { CONSOLE_MESSAGES as M } from '../../web/console/messages';

/**
 * The console (PAGES.md §5): one shell for every /console path; the single-page app routes inside it and acts
 * only through the typed client. It reads a sign-in secret from the fragment, so it is sent as a secret page.
 */
export async function consolePageRoutes(app: FastifyInstance, _deps: AppDeps): Promise<void> {
  const shell = (reply: FastifyReply) => {
    const script = app.webAsset('console.js');
    const style = app.webAsset('console.css');
    const body = html`<noscript><p>${M.noScript}</p></noscript><p class="loading">${M.loading}</p>`;
    return sendPage(reply, pageShell({
      lang: 'en', title: M.title, body, styles: style ? [style] : [], scripts: script ? [script] : [],
    }), { secret: true });
  };
  app.get('/console', { config: { hidden: true } }, async (_request, reply) => shell(reply));
  app.get('/console/*', { config: { hidden: true } }, async (_request, reply) => shell(reply));
}
