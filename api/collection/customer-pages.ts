import { randomBytes } from 'node:crypto';
import { FastifyReply, FastifyRequest, InjectOptions } from 'fastify';
import type { AppDeps } from '../app-deps';
import type { RouteApp } from '../plugins/validation';
import { verifiedDomainFlow } from '../../db/collection/domains';
import { sendPage } from '../plugins/web-pages';
import { SafeHtml, html } from '../../web/shared/html';
import { pageShell } from '../../web/shared/page-shell';
import { LANG, M, refusal } from '../../web/customer/messages';
import {
  FlowView, Interview, Link, Passport, ReviewItem, Story, StoryValues, controlView, errorView, fragmentShell, interviewView, optOutDone,
  reviewView, storyForm, thanksView,
} from '../../web/customer/views';
import { fieldOfMessage, patchOf, valuesFromEntries, valuesOfDraft } from '../../web/customer/story';
import { refuseSecretsInUrl } from './customer-auth';

/**
 * The pages a customer opens (PAGES.md §2–4): thin. Each renders a shell or a server-rendered form and
 * acts only through the documented customer API, called in-process with `app.inject` exactly as a
 * browser would call it. Pages whose code is in the URL fragment are read by the script; without
 * JavaScript, the code is pasted into a POST form (never a query string) and the page is rendered here,
 * every later form carrying the code in its POST body (docs/collection.md, "Customer pages").
 */

type Form = Array<[string, string]>;
interface ApiAnswer { status: number; body: any; headers: Record<string, unknown>; raw: Buffer }

/** The fragment pages: path, heading, the code's prefix and the header the API names for it. */
const FRAGMENT_PAGES = {
  r: { heading: M.storyHeading, prefix: 'pr_', header: 'x-link-token' },
  continue: { heading: M.storyHeading, prefix: 'cl_', header: 'x-link-token' },
  control: { heading: M.controlPageHeading, prefix: 'ct_', header: 'x-control-token' },
  review: { heading: M.reviewHeading, prefix: 'ct_', header: 'x-control-token' },
  interview: { heading: M.interviewHeading, prefix: 'iv_', header: 'x-interview-token' },
  'opt-out': { heading: M.optOutHeading, prefix: 'pr_', header: 'x-link-token' },
} as const;
type FragmentPage = keyof typeof FRAGMENT_PAGES;

const SUBMISSION_KEY = () => randomBytes(18).toString('base64url');

export async function customerPageRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => {
    done(null, [...new URLSearchParams(body as string)]);
  });
  const hidden = { config: { hidden: true } };
  const script = () => app.webAsset('customer.js');
  const style = () => app.webAsset('customer.css');

  const api = async (opts: InjectOptions, request: FastifyRequest): Promise<ApiAnswer> => {
    // The client's address travels on, so the API's per-address limits and consent evidence see the customer.
    const res = await app.inject({ ...opts, remoteAddress: request.ip });
    let body: unknown = null;
    try {
      body = res.body ? JSON.parse(res.body) : null;
    } catch {
      body = res.body;
    }
    return { status: res.statusCode, body, headers: res.headers, raw: res.rawPayload };
  };
  const refused = (a: ApiAnswer) => refusal(a.body?.code, a.body?.error);

  const page = (reply: FastifyReply, title: string, body: SafeHtml, opts: { status?: number; secret?: boolean; data?: unknown; scripts?: boolean } = {}) => {
    const src = opts.scripts === false ? null : script();
    const css = style();
    reply.code(opts.status ?? 200);
    return sendPage(reply, pageShell({
      lang: LANG, title, body, styles: css ? [css] : [], scripts: src ? [src] : [], data: opts.data,
    }), { secret: opts.secret, scripts: opts.scripts === false ? false : undefined });
  };

  /** A verified custom domain serves the pages at its root; elsewhere the root paths are not ours. */
  const domainOf = async (request: FastifyRequest) => verifiedDomainFlow(ds, request.hostname);

  const livePage = async (request: FastifyRequest, reply: FastifyReply, publicId: string, base: string) => {
    const answer = await api({ method: 'GET', url: `/api/proof/collect/flows/${encodeURIComponent(publicId)}` }, request);
    if (answer.status !== 200) {
      const message = answer.status === 404 ? M.notFound : answer.status === 409 ? M.notLive : refused(answer);
      return page(reply, M.siteName, html`<h1>${M.siteName}</h1>${errorView(message)}`, { status: answer.status, scripts: false });
    }
    const flow = answer.body.data as FlowView;
    const form = storyForm(flow, {
      action: '/api/proof/collect/nojs', hidden: { flow: flow.id, flowVersion: flow.flowVersionId, submissionKey: SUBMISSION_KEY() },
    });
    return page(reply, flow.title || M.siteName, form, { data: { page: 'flow', base, flow } });
  };

  const fragmentPage = (name: FragmentPage, base: string) => async (_request: FastifyRequest, reply: FastifyReply) => {
    const p = FRAGMENT_PAGES[name];
    return page(reply, p.heading, fragmentShell(p.heading, `${base}/${name}`, p.prefix), { secret: true, data: { page: name, base } });
  };

  /** The code posted from the paste form or carried by a later form; only a well-formed code of the page's kind. */
  const codeOf = (form: Form, name: FragmentPage): string | null => {
    const raw = (form.find(([k]) => k === 'code')?.[1] ?? '').trim().replace(/^.*#/, '');
    return raw.startsWith(FRAGMENT_PAGES[name].prefix) && /^[a-z]{2}_[A-Za-z0-9_-]{43}$/.test(raw) ? raw : null;
  };
  const field = (form: Form, name: string) => form.find(([k]) => k === name)?.[1];
  const formOf = (request: FastifyRequest): Form => (Array.isArray(request.body) ? request.body as Form : []);

  const badCode = (reply: FastifyReply, name: FragmentPage, base: string) => {
    const p = FRAGMENT_PAGES[name];
    return page(reply, p.heading, html`${errorView(M.codes.UNAUTHORIZED)}${fragmentShell(p.heading, `${base}/${name}`, p.prefix)}`,
      { status: 400, secret: true, scripts: false });
  };

  // The story form of a personal request or a continuation, without JavaScript: the draft session rides in the POST body.
  const draftForm = (reply: FastifyReply, base: string, opened: { draft: Record<string, any>; draftSession: string; flow: FlowView }, values?: StoryValues,
    error?: string, fieldErrors?: Record<string, string>, optOut?: Link) =>
    page(reply, opened.flow.title || M.siteName, storyForm(opened.flow, {
      action: `${base}/draft`, hidden: { draft: opened.draft.id, session: opened.draftSession },
      values: values ?? valuesOfDraft(opened.draft), error, fieldErrors, optOut,
    }), { secret: true, scripts: false, status: error ? 400 : 200 });

  const controlPage = async (request: FastifyRequest, reply: FastifyReply, base: string, code: string, notice?: string, error?: string) => {
    const headers = { 'x-control-token': code };
    const control = await api({ method: 'GET', url: '/api/proof/collect/control', headers }, request);
    if (control.status !== 200) return page(reply, M.controlPageHeading, html`<h1>${M.controlPageHeading}</h1>${errorView(refused(control))}`,
      { status: control.status, secret: true, scripts: false });
    const stories = control.body.data.stories as Story[];
    const passports: Record<string, Passport | null> = {};
    for (const s of stories) {
      const p = await api({ method: 'GET', url: `/api/proof/collect/control/passport?proofItemId=${encodeURIComponent(s.proofItemId)}`, headers }, request);
      passports[s.proofItemId] = p.status === 200 ? p.body.data : null;
    }
    return page(reply, M.controlPageHeading, html`<h1>${M.controlPageHeading}</h1>${controlView(stories, passports, { base, code }, notice, error)}`,
      { secret: true, scripts: false });
  };

  const reviewPage = async (request: FastifyRequest, reply: FastifyReply, base: string, code: string, notice?: string, error?: string) => {
    const review = await api({ method: 'GET', url: '/api/proof/review', headers: { 'x-control-token': code } }, request);
    if (review.status !== 200) return page(reply, M.reviewHeading, html`<h1>${M.reviewHeading}</h1>${errorView(refused(review))}`,
      { status: review.status, secret: true, scripts: false });
    const items = [...review.body.data.versions, ...review.body.data.assets] as ReviewItem[];
    return page(reply, M.reviewHeading, html`<h1>${M.reviewHeading}</h1>${reviewView(items, { base, code }, notice, error)}`, { secret: true, scripts: false });
  };

  const interviewPage = async (request: FastifyRequest, reply: FastifyReply, base: string, code: string, error?: string) => {
    const iv = await api({ method: 'GET', url: '/api/proof/interview', headers: { 'x-interview-token': code } }, request);
    if (iv.status !== 200) return page(reply, M.interviewHeading, html`<h1>${M.interviewHeading}</h1>${errorView(refused(iv))}`,
      { status: iv.status, secret: true, scripts: false });
    return page(reply, M.interviewHeading, html`<h1>${M.interviewHeading}</h1>${interviewView(iv.body.data.interview as Interview, { base, code }, error)}`,
      { secret: true, scripts: false });
  };

  const routes = (base: string, guard: (request: FastifyRequest) => Promise<boolean>) => {
    const guarded = <T extends (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>>(handler: T) =>
      async (request: FastifyRequest, reply: FastifyReply) => ((await guard(request)) ? handler(request, reply) : reply.callNotFound());

    app.get(`${base}/f/:publicId`, hidden, guarded(async (request, reply) => {
      const publicId = (request.params as { publicId: string }).publicId;
      // A custom domain is its own flow's: another workspace's form never answers under it.
      if (base === '' && (await domainOf(request))?.publicId !== publicId) return reply.callNotFound();
      return livePage(request, reply, publicId, base);
    }));
    for (const name of Object.keys(FRAGMENT_PAGES) as FragmentPage[]) app.get(`${base}/${name}`, hidden, guarded(fragmentPage(name, base)));

    const opened = (name: 'r' | 'continue') => guarded(async (request, reply) => {
      const code = codeOf(formOf(request), name);
      if (!code) return badCode(reply, name, base);
      const answer = name === 'r'
        ? await api({ method: 'POST', url: '/api/proof/collect/drafts', headers: { 'x-link-token': code }, payload: {} }, request)
        : await api({ method: 'POST', url: '/api/proof/collect/continue', headers: { 'x-link-token': code }, payload: {} }, request);
      if (answer.status >= 300) return page(reply, M.storyHeading, html`<h1>${M.storyHeading}</h1>${errorView(refused(answer))}`,
        { status: answer.status, secret: true, scripts: false });
      return draftForm(reply, base, answer.body.data, undefined, undefined, undefined, name === 'r' ? { base, code } : undefined);
    });
    app.post(`${base}/r`, hidden, opened('r'));
    app.post(`${base}/continue`, hidden, opened('continue'));

    // Saves and submits a request's or a continued draft without JavaScript; a refusal shows the form again with every value.
    app.post(`${base}/draft`, hidden, guarded(async (request, reply) => {
      const form = formOf(request);
      const draftId = field(form, 'draft') ?? '';
      const session = field(form, 'session') ?? '';
      if (!/^drf_[A-Za-z0-9]+$/.test(draftId) || !/^ds_[A-Za-z0-9_-]{43}$/.test(session)) return badCode(reply, 'continue', base);
      const headers = { 'x-draft-session': session };
      const current = await api({ method: 'GET', url: `/api/proof/collect/drafts/${draftId}`, headers }, request);
      if (current.status !== 200) return page(reply, M.storyHeading, html`<h1>${M.storyHeading}</h1>${errorView(refused(current))}`,
        { status: current.status, secret: true, scripts: false });
      const flow = current.body.data.flow as FlowView;
      const values = valuesFromEntries(form, flow);
      const opened = { draft: current.body.data.draft, draftSession: session, flow };
      const again = (a: ApiAnswer) => {
        const message = refused(a);
        const at = fieldOfMessage(String(a.body?.error ?? ''), flow);
        return draftForm(reply, base, opened, values, message, at ? { [at]: message } : undefined);
      };
      const saved = await api({ method: 'PATCH', url: `/api/proof/collect/drafts/${draftId}`, headers, payload: patchOf(values, flow) }, request);
      if (saved.status !== 200) return again(saved);
      const submitted = await api({ method: 'POST', url: `/api/proof/collect/drafts/${draftId}/submit`, headers, payload: {} }, request);
      if (submitted.status !== 201) return again(submitted);
      return page(reply, M.thanksHeading, thanksView(flow, submitted.body.data.controlUrl, false), { secret: true, scripts: false });
    }));

    app.post(`${base}/opt-out`, hidden, guarded(async (request, reply) => {
      const code = codeOf(formOf(request), 'opt-out') ?? codeOf(formOf(request), 'r');
      if (!code) return badCode(reply, 'opt-out', base);
      const answer = await api({ method: 'POST', url: '/api/proof/collect/opt-out', headers: { 'x-link-token': code }, payload: {} }, request);
      if (answer.status !== 200) return page(reply, M.optOutHeading, html`<h1>${M.optOutHeading}</h1>${errorView(refused(answer))}`,
        { status: answer.status, secret: true, scripts: false });
      return page(reply, M.optOutDoneHeading, optOutDone(), { secret: true, scripts: false });
    }));

    app.post(`${base}/control`, hidden, guarded(async (request, reply) => {
      const code = codeOf(formOf(request), 'control');
      return code ? controlPage(request, reply, base, code) : badCode(reply, 'control', base);
    }));
    app.post(`${base}/control/act`, hidden, guarded(async (request, reply) => {
      const form = formOf(request);
      const code = codeOf(form, 'control');
      if (!code) return badCode(reply, 'control', base);
      const body: Record<string, unknown> = {};
      for (const [k, v] of form) {
        if (k === 'code' || (k === 'reason' && v === '')) continue;
        body[k] = k === 'confirm' ? v === 'true' : v;
      }
      const answer = await api({ method: 'POST', url: '/api/proof/collect/control', headers: { 'x-control-token': code }, payload: body }, request);
      if (answer.status >= 300) return controlPage(request, reply, base, code, undefined, refused(answer));
      return controlPage(request, reply, base, code, body.action === 'approve_wording' ? M.approvedNotice : M.done);
    }));
    app.post(`${base}/control/person-link`, hidden, guarded(async (request, reply) => {
      const form = formOf(request);
      const code = codeOf(form, 'control');
      if (!code) return badCode(reply, 'control', base);
      const answer = await api({ method: 'POST', url: '/api/proof/collect/control/person-link', headers: { 'x-control-token': code },
        payload: { email: field(form, 'email') ?? '' } }, request);
      return answer.status < 300 ? controlPage(request, reply, base, code, M.personLinkSent)
        : controlPage(request, reply, base, code, undefined, refused(answer));
    }));
    app.post(`${base}/control/download`, hidden, guarded(async (request, reply) => {
      const form = formOf(request);
      const code = codeOf(form, 'control');
      if (!code) return badCode(reply, 'control', base);
      const item = encodeURIComponent(field(form, 'proofItemId') ?? '');
      const url = field(form, 'what') === 'passport' ? `/api/proof/collect/control/passport?proofItemId=${item}&download=1`
        : `/api/proof/collect/control/receipt?proofItemId=${item}`;
      const answer = await api({ method: 'GET', url, headers: { 'x-control-token': code } }, request);
      if (answer.status !== 200) return controlPage(request, reply, base, code, undefined, refused(answer));
      const name = field(form, 'what') === 'passport' ? 'passport' : 'receipt';
      return reply.type('application/json').header('cache-control', 'no-store').header('x-content-type-options', 'nosniff')
        .header('content-disposition', `attachment; filename="${name}-${item.replace(/[^A-Za-z0-9_]/g, '')}.json"`).send(answer.raw);
    }));

    app.post(`${base}/review`, hidden, guarded(async (request, reply) => {
      const code = codeOf(formOf(request), 'review');
      return code ? reviewPage(request, reply, base, code) : badCode(reply, 'review', base);
    }));
    app.post(`${base}/review/act`, hidden, guarded(async (request, reply) => {
      const form = formOf(request);
      const code = codeOf(form, 'review');
      if (!code) return badCode(reply, 'review', base);
      const payload = Object.fromEntries(['kind', 'id', 'decision', 'contentHash'].map((k) => [k, field(form, k) ?? '']));
      const answer = await api({ method: 'POST', url: '/api/proof/review', headers: { 'x-control-token': code }, payload }, request);
      return answer.status < 300 ? reviewPage(request, reply, base, code, M.done) : reviewPage(request, reply, base, code, undefined, refused(answer));
    }));

    app.post(`${base}/interview`, hidden, guarded(async (request, reply) => {
      const code = codeOf(formOf(request), 'interview');
      return code ? interviewPage(request, reply, base, code) : badCode(reply, 'interview', base);
    }));
    app.post(`${base}/interview/act`, hidden, guarded(async (request, reply) => {
      const form = formOf(request);
      const code = codeOf(form, 'interview');
      if (!code) return badCode(reply, 'interview', base);
      const payload = field(form, 'action') === 'finish' ? { action: 'finish' }
        : { questionId: field(form, 'questionId') ?? '', text: field(form, 'text') ?? '' };
      const answer = await api({ method: 'POST', url: '/api/proof/interview', headers: { 'x-interview-token': code }, payload }, request);
      return interviewPage(request, reply, base, code, answer.status < 300 ? undefined : refused(answer));
    }));
  };

  // Secrets never ride in a page's URL either (a pasted link lands in the POST body).
  app.addHook('onRequest', async (request) => {
    if (request.url.includes('?')) refuseSecretsInUrl(request);
  });
  routes('/collect', async () => true);
  // A verified collection domain: the same pages at its root, and its flow's form at `/`.
  routes('', async (request) => (await domainOf(request)) !== null);
  app.get('/', hidden, async (request, reply) => {
    const flow = await domainOf(request);
    return flow ? livePage(request, reply, flow.publicId, '') : reply.callNotFound();
  });
}
