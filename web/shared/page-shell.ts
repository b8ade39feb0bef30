import { SafeHtml, html } from './html';

export interface PageShell {
  lang: string;
  title: string;
  /** The page's content inside <main>. */
  body: SafeHtml;
  /** Built asset URLs (from the web manifest): the set's style sheet and, when the page is enhanced, its module script. */
  styles?: string[];
  scripts?: string[];
  /** Data the page's script reads (JSON in a non-executed script element; CSP allows it, nothing runs it). */
  data?: unknown;
}

/** The document every server-rendered page answers: phone-first viewport, the page's lang, no inline code. */
export function pageShell(page: PageShell): string {
  const data = page.data === undefined ? '' : JSON.stringify(page.data).replace(/</g, '\\u003c');
  return `<!doctype html>${html`<html lang="${page.lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
${(page.styles ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}
${(page.scripts ?? []).map((src) => html`<script type="module" src="${src}"></script>`)}
</head><body>${data ? html`<script type="application/json" id="page-data">${new SafeHtml(data)}</script>` : ''}<main id="main">${page.body}</main></body></html>`}`;
}
