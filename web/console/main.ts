import { SafeHtml, html } from '../shared/html';
import { ConsoleClient, Schemas, Session, consoleClient, refusal } from './api';
import { CONSOLE_MESSAGES as M } from './messages';

type View = 'queue' | 'revocations' | 'keys' | 'webhooks';
const VIEWS: View[] = ['queue', 'revocations', 'keys', 'webhooks'];

interface State { session: Session; api: ConsoleClient }

const main = document.getElementById('main')!;
let cleanup: (() => void) | null = null;

function render(target: Element, content: SafeHtml): void {
  target.innerHTML = content.text;
}

function status(text: string, kind: 'ok' | 'error' = 'ok'): SafeHtml {
  return html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}

function failure(error: unknown, response: Response): SafeHtml {
  const r = refusal(error, response.status);
  return status(r.status === 403 && r.code === 'FORBIDDEN' ? M.refusedRole : M.failed(r.code, r.message), 'error');
}

const when = (iso: string) => new Date(iso).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });

function duration(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  const h = Math.floor(minutes / 60);
  return h > 0 ? `${h} h ${minutes % 60} min` : `${minutes} min`;
}

/** The page outside the view: skip link, navigation with the current view marked, who is signed in, sign-out. */
function frame(state: State, view: View): void {
  document.querySelector('header.console')?.remove();
  const header = document.createElement('header');
  header.className = 'console';
  render(header, html`<a class="skip" href="#main">${M.skip}</a>
<nav aria-label="${M.nav}"><ul>${VIEWS.map((v) => html`<li><a href="/console/${v}" data-nav="${v}" ${v === view ? html`aria-current="page"` : ''}>${M.views[v]}</a></li>`)}</ul></nav>
<p class="who">${M.signedInAs(state.session.email, state.session.role)}</p>
<button type="button" id="sign-out">${M.signOut}</button>`);
  document.body.insertBefore(header, main);
  header.querySelector('#sign-out')!.addEventListener('click', async () => {
    await state.api.POST('/api/workspace/sign-out');
    history.replaceState(null, '', '/console/sign-in');
    // A sign-in link opened in a tab that already shows the console only changes the fragment.
    window.addEventListener('hashchange', () => void start());
    void start();
  });
  header.querySelectorAll<HTMLAnchorElement>('a[data-nav]').forEach((a) => a.addEventListener('click', (event) => {
    event.preventDefault();
    history.pushState(null, '', a.href);
    void show(state);
  }));
}

const isWriter = (s: Session) => s.role === 'owner' || s.role === 'admin';

function versionText(v: Schemas['ProofVersion']): string {
  const c = v.content as { text?: unknown; title?: unknown };
  return [typeof c.title === 'string' ? c.title : '', typeof c.text === 'string' ? c.text : ''].filter(Boolean).join('\n\n');
}

function diffList(diff: Record<string, unknown>): SafeHtml {
  const entries = Object.entries(diff);
  if (entries.length === 0) return html`<p>${M.queue.noDiff}</p>`;
  return html`<dl class="diff">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${typeof v === 'string' ? v : JSON.stringify(v)}</dd>`)}</dl>`;
}

async function queueView(state: State, target: HTMLElement): Promise<void> {
  const { data, error, response } = await state.api.GET('/api/workspace/proof/review-queue', { params: { query: { limit: 50 } } });
  if (!data) return render(target, html`<h1>${M.queue.heading}</h1>${failure(error, response)}`);
  const writer = isWriter(state.session);
  render(target, html`<h1>${M.queue.heading}</h1>
<p class="hint">${M.queue.shortcuts}</p>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}
<div id="queue-status"></div>
${data.data.length === 0 ? html`<p>${M.queue.empty}</p>` : ''}
<ol class="queue">${data.data.map((r, i) => html`<li class="request" tabindex="-1" data-index="${i}" data-item="${r.proofItemId}" data-version="${r.versionId}" aria-labelledby="req-${r.id}">
  <h2 id="req-${r.id}">${r.item.type} · ${r.proofItemId} · ${M.queue.version(r.version.versionNumber)} <span class="meta">${M.queue.requested(when(r.requestedAt))}</span></h2>
  <div class="compare">
    <section aria-label="${M.queue.original}"><h3>${M.queue.original}</h3>${r.original ? html`<pre class="words">${versionText(r.original)}</pre>` : html`<p>${M.queue.same}</p>`}</section>
    <section aria-label="${M.queue.derivative}"><h3>${M.queue.derivative}</h3><pre class="words" data-field="wording">${versionText(r.version)}</pre></section>
  </div>
  <h3>${M.queue.diff}</h3>${diffList(r.version.semanticDiff as Record<string, unknown>)}
  <h3>${M.queue.consent} (${r.consent.status})</h3>
  ${r.consent.grants.length === 0 ? html`<p>${M.queue.noGrants}</p>` : html`<ul>${r.consent.grants.map((g) => html`<li>${M.queue.grant(g.state, g.channels.join(', '), g.displayMode, g.paidUseAllowed)}</li>`)}</ul>`}
  ${writer ? html`<div class="actions">
    <button type="button" class="approve" data-action="approve">${M.queue.approve(r.version.versionNumber)}</button>
    <form class="reject"><label>${M.queue.reason} <textarea name="reason" required minlength="3" maxlength="2000" rows="2"></textarea></label>
    <button type="submit">${M.queue.reject}</button></form>
  </div>` : ''}
</li>`)}</ol>`);
  const notice = target.querySelector('#queue-status')!;
  const items = [...target.querySelectorAll<HTMLLIElement>('li.request')];
  let current = 0;
  const focusItem = (i: number) => {
    if (items.length === 0) return;
    current = Math.max(0, Math.min(items.length - 1, i));
    items.forEach((el, k) => el.classList.toggle('current', k === current));
    items[current].focus();
  };
  const decided = async (li: HTMLLIElement, kind: 'approve' | 'reject', reason?: string) => {
    const id = li.dataset.item!;
    const versionId = li.dataset.version!;
    const res = kind === 'approve'
      ? await state.api.POST('/api/workspace/proof/items/{id}/approve', { params: { path: { id } }, body: { versionId } })
      : await state.api.POST('/api/workspace/proof/items/{id}/reject', { params: { path: { id } }, body: { versionId, reason: reason! } });
    if (res.data) {
      render(notice, status(kind === 'approve' ? M.queue.approved : M.queue.rejected));
      li.remove();
      items.splice(items.indexOf(li), 1);
      focusItem(current);
    } else {
      render(notice, failure(res.error, res.response));
    }
  };
  for (const li of items) {
    li.querySelector('button.approve')?.addEventListener('click', () => void decided(li, 'approve'));
    li.querySelector('form.reject')?.addEventListener('submit', (event) => {
      event.preventDefault();
      const reason = (li.querySelector('textarea') as HTMLTextAreaElement).value.trim();
      void decided(li, 'reject', reason);
    });
  }
  const onKey = (event: KeyboardEvent) => {
    if (event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement || event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === 'j') focusItem(current + 1);
    else if (event.key === 'k') focusItem(current - 1);
    else if (event.key === 'a' && writer && items[current]) void decided(items[current], 'approve');
    else if (event.key === 'r' && writer && items[current]) {
      event.preventDefault();
      items[current].querySelector('textarea')?.focus();
    } else return;
  };
  document.addEventListener('keydown', onKey);
  cleanup = () => document.removeEventListener('keydown', onKey);
  if (items.length) items[0].classList.add('current');
}

async function revocationsView(state: State, target: HTMLElement): Promise<void> {
  const { data, error, response } = await state.api.GET('/api/workspace/proof/revocations', { params: { query: { limit: 50 } } });
  if (!data) return render(target, html`<h1>${M.revocations.heading}</h1>${failure(error, response)}`);
  const writer = isWriter(state.session);
  const now = Date.now();
  render(target, html`<h1>${M.revocations.heading}</h1>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}<div id="rev-status"></div>
${data.data.length === 0 ? html`<p>${M.revocations.empty}</p>` : ''}
<ul class="cards">${data.data.map((r) => {
    const left = new Date(r.slaDeadlineAt).getTime() - now;
    return html`<li data-revocation="${r.id}"><h2>${r.proofItemId} <span class="meta">${r.resolutionState}</span></h2>
<p class="${left < 0 ? 'overdue' : 'due'}">${left < 0 ? M.revocations.overdue(duration(left)) : M.revocations.due(duration(left))} (${when(r.slaDeadlineAt)})</p>
${r.requestText ? html`<p>${M.revocations.requestText}: <q>${r.requestText}</q></p>` : ''}
<h3>${M.revocations.renders}</h3>${r.listedIn.length ? html`<ul>${r.listedIn.map((p) => html`<li>${p.name} (${p.placementId}, ${p.state})</li>`)}</ul>` : html`<p>${M.revocations.rendersNone}</p>`}
${writer ? html`<button type="button" data-complete="${r.id}">${M.revocations.complete}</button>` : ''}</li>`;
  })}</ul>`);
  const notice = target.querySelector('#rev-status')!;
  target.querySelectorAll<HTMLButtonElement>('button[data-complete]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/workspace/proof/revocations/{id}/complete', { params: { path: { id: b.dataset.complete! } } });
    if (res.data) {
      b.closest('li')!.remove();
      render(notice, status(M.revocations.completed));
    } else render(notice, failure(res.error, res.response));
  }));
}

const SCOPES = [
  'service:proof:read', 'service:proof:read_private', 'service:proof:write', 'service:proof:publish',
  'service:proof:export', 'service:proof:submissions:write', 'service:signals:read', 'service:signals:write',
  'service:threads:read', 'service:threads:write', 'service:features:read', 'service:features:write',
  'service:inbox:read', 'service:rooms:read', 'service:rooms:write', 'service:sources:read',
] as const;
type Scope = (typeof SCOPES)[number];

function secretBox(label: string, secret: string): SafeHtml {
  return html`<div class="secret" role="status"><p>${label}</p><output data-field="secret">${secret}</output></div>`;
}

async function keysView(state: State, target: HTMLElement): Promise<void> {
  const { data, error, response } = await state.api.GET('/api/workspace/keys', { params: { query: { limit: 100 } } });
  if (!data) return render(target, html`<h1>${M.keys.heading}</h1>${failure(error, response)}`);
  const owner = state.session.role === 'owner';
  render(target, html`<h1>${M.keys.heading}</h1>${owner ? '' : html`<p class="hint">${M.keys.ownerOnly}</p>`}<div id="key-status"></div>
${owner ? html`<form id="create-key"><fieldset><legend>${M.keys.create}</legend>
<label>${M.keys.product} <input name="productId" autocomplete="off"></label>
<label>${M.keys.environment} <select name="environment"><option>production</option><option>staging</option><option>development</option></select></label>
<fieldset class="scopes"><legend>${M.keys.scopes}</legend>${SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}"> ${s}</label>`)}</fieldset>
<label>${M.keys.days} <input name="days" type="number" min="1" max="365" value="180"></label>
<button type="submit">${M.keys.submit}</button></fieldset></form>` : ''}
${data.data.length === 0 ? html`<p>${M.keys.empty}</p>` : ''}
<table><caption>${M.keys.heading}</caption><thead><tr><th scope="col">Id</th><th scope="col">Prefix</th><th scope="col">Environment</th><th scope="col">Scopes</th><th scope="col">Expires</th><th scope="col">State</th>${owner ? html`<th scope="col">Actions</th>` : ''}</tr></thead>
<tbody>${data.data.map((k) => html`<tr data-key="${k.id}"><td>${k.id}</td><td>${k.prefix}…</td><td>${k.environment}</td><td>${k.scopes.join(', ')}</td><td>${when(k.expiresAt)}</td><td>${k.revokedAt ? M.keys.revoked : 'active'}</td>
${owner ? html`<td>${k.revokedAt ? '' : html`<button type="button" data-rotate="${k.id}">${M.keys.rotate} ${k.id}</button> <button type="button" data-revoke="${k.id}">${M.keys.revoke} ${k.id}</button>`}</td>` : ''}</tr>`)}</tbody></table>`);
  const notice = target.querySelector('#key-status')!;
  const shown = async (res: { data?: { data: { secret: string } }; error?: unknown; response: Response }) => {
    await keysView(state, target);
    render(target.querySelector('#key-status')!, res.data ? secretBox(M.keys.secret, res.data.data.secret) : failure(res.error, res.response));
  };
  target.querySelector<HTMLFormElement>('#create-key')?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const productId = String(form.get('productId') ?? '').trim();
    await shown(await state.api.POST('/api/workspace/keys', {
      body: {
        productId: productId || null, environment: String(form.get('environment')),
        scopes: form.getAll('scopes').map(String) as Scope[], expiresInDays: Number(form.get('days')),
      },
    }));
  });
  target.querySelectorAll<HTMLButtonElement>('button[data-rotate]').forEach((b) => b.addEventListener('click', async () => {
    await shown(await state.api.POST('/api/workspace/keys/{id}/rotate', { params: { path: { id: b.dataset.rotate! } } }));
  }));
  target.querySelectorAll<HTMLButtonElement>('button[data-revoke]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/workspace/keys/{id}/revoke', { params: { path: { id: b.dataset.revoke! } } });
    if (res.data) await keysView(state, target);
    else render(notice, failure(res.error, res.response));
  }));
}

async function webhooksView(state: State, target: HTMLElement): Promise<void> {
  const [endpoints, deliveries] = await Promise.all([
    state.api.GET('/api/workspace/webhooks/endpoints'),
    state.api.GET('/api/workspace/webhooks/deliveries', { params: { query: { limit: 50 } } }),
  ]);
  if (!endpoints.data || !deliveries.data) {
    return render(target, html`<h1>${M.webhooks.heading}</h1>${failure(endpoints.error ?? deliveries.error, endpoints.data ? deliveries.response : endpoints.response)}`);
  }
  render(target, html`<h1>${M.webhooks.heading}</h1><div id="hook-status"></div>
<h2>${M.webhooks.endpoints}</h2>
<form id="create-endpoint"><fieldset><legend>${M.webhooks.create}</legend>
<label>${M.webhooks.url} <input name="url" type="url" required></label>
<label>${M.webhooks.description} <input name="description"></label>
<label>${M.webhooks.subscriptions} <input name="subscriptions" value="proof.*" required></label>
<button type="submit">${M.webhooks.submit}</button></fieldset></form>
${endpoints.data.data.length === 0 ? html`<p>${M.webhooks.noEndpoints}</p>` : html`<ul class="cards">${endpoints.data.data.map((e) => html`<li><h3>${e.url}</h3>
<p>${e.description} · ${e.subscriptions.join(', ')} · ${e.enabled ? 'enabled' : 'disabled'}</p>
<button type="button" data-rotate-secret="${e.id}">${M.webhooks.rotate} (${e.url})</button></li>`)}</ul>`}
<h2>${M.webhooks.deliveries}</h2>
${deliveries.data.data.length === 0 ? html`<p>${M.webhooks.noDeliveries}</p>` : html`<table><caption>${M.webhooks.deliveries}</caption>
<thead><tr><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last error</th><th scope="col">Actions</th></tr></thead>
<tbody>${deliveries.data.data.map((d) => html`<tr data-delivery="${d.id}"><td>${d.id}${d.replayOfId ? html` (replay of ${d.replayOfId})` : ''}</td><td>${d.eventType}</td><td>${d.status}</td><td>${d.attemptCount}</td><td>${d.lastError ?? ''}</td>
<td><button type="button" data-attempts="${d.id}">${M.webhooks.show} ${d.id}</button> <button type="button" data-replay="${d.id}">${M.webhooks.replay} ${d.id}</button></td></tr>`)}</tbody></table>`}
<div id="attempts" aria-live="polite"></div>
<h2>${M.webhooks.signature}</h2><p>${M.webhooks.signatureText}</p>`);
  const notice = target.querySelector('#hook-status')!;
  target.querySelector<HTMLFormElement>('#create-endpoint')!.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const res = await state.api.POST('/api/workspace/webhooks/endpoints', {
      body: {
        url: String(form.get('url')), description: String(form.get('description') ?? ''),
        subscriptions: String(form.get('subscriptions')).split(',').map((s) => s.trim()).filter(Boolean),
      },
    });
    await webhooksView(state, target);
    render(target.querySelector('#hook-status')!, res.data ? secretBox(M.webhooks.secret, res.data.data.secret) : failure(res.error, res.response));
  });
  target.querySelectorAll<HTMLButtonElement>('button[data-rotate-secret]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/workspace/webhooks/endpoints/{id}/rotate-secret', { params: { path: { id: b.dataset.rotateSecret! } } });
    render(notice, res.data ? secretBox(M.webhooks.secret, res.data.data.secret) : failure(res.error, res.response));
  }));
  target.querySelectorAll<HTMLButtonElement>('button[data-attempts]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.GET('/api/workspace/webhooks/deliveries/{id}', { params: { path: { id: b.dataset.attempts! } } });
    const out = target.querySelector('#attempts')!;
    if (!res.data) return render(out, failure(res.error, res.response));
    const d = res.data.data;
    render(out, html`<h3>${M.webhooks.attempts}: ${d.id}</h3><ol>${d.attempts.map((a) => html`<li>#${a.attempt} ${when(a.startedAt)} · ${a.statusCode ?? a.error ?? ''} · ${a.durationMs ?? '?'} ms${a.responseExcerpt ? html`<pre>${a.responseExcerpt}</pre>` : ''}</li>`)}</ol>`);
  }));
  target.querySelectorAll<HTMLButtonElement>('button[data-replay]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/workspace/webhooks/deliveries/{id}/replay', { params: { path: { id: b.dataset.replay! } } });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await webhooksView(state, target);
    render(target.querySelector('#hook-status')!, status(M.webhooks.replayed));
  }));
}

const RENDERERS: Record<View, (state: State, target: HTMLElement) => Promise<void>> = {
  queue: queueView, revocations: revocationsView, keys: keysView, webhooks: webhooksView,
};

async function show(state: State): Promise<void> {
  cleanup?.();
  cleanup = null;
  const name = location.pathname.replace(/^\/console\/?/, '').split('/')[0];
  const view: View = (VIEWS as string[]).includes(name) ? (name as View) : 'queue';
  if (name !== view) history.replaceState(null, '', `/console/${view}`);
  frame(state, view);
  document.title = `${M.views[view]} · ${M.title}`;
  render(main, html`<p class="loading">${M.loading}</p>`);
  await RENDERERS[view](state, main);
  main.dataset.view = view;
}

function signInPage(message?: SafeHtml): void {
  document.querySelector('header.console')?.remove();
  document.title = `${M.signIn.heading} · ${M.title}`;
  render(main, html`<h1>${M.signIn.heading}</h1>${message ?? ''}<p>${M.signIn.intro}</p>
<form id="sign-in"><label>${M.signIn.email} <input name="email" type="email" autocomplete="email" required></label>
<button type="submit">${M.signIn.send}</button></form><div id="sign-in-status"></div><p class="hint">${M.signIn.noSmtp}</p>`);
  main.querySelector<HTMLFormElement>('#sign-in')!.addEventListener('submit', async (event) => {
    event.preventDefault();
    const email = String(new FormData(event.target as HTMLFormElement).get('email'));
    const res = await consoleClient().POST('/api/workspace/sign-in', { body: { email } });
    render(main.querySelector('#sign-in-status')!, res.data ? status(M.signIn.sent) : failure(res.error, res.response));
  });
}

async function start(): Promise<void> {
  // A sign-in link's secret is in the fragment: read it, take it out of the address bar, trade it for a session.
  const secret = /^#(sl_[A-Za-z0-9_-]{43})$/.exec(location.hash)?.[1];
  if (secret) {
    history.replaceState(null, '', '/console/sign-in');
    render(main, html`<p class="loading">${M.signIn.completing}</p>`);
    const res = await consoleClient().POST('/api/workspace/sign-in/complete', { headers: { 'x-sign-in-token': secret } });
    if (!res.data) return signInPage(status(M.signIn.linkFailed, 'error'));
    history.replaceState(null, '', '/console/queue');
  }
  const { data } = await consoleClient().GET('/api/workspace/session');
  if (!data) {
    if (!location.pathname.startsWith('/console/sign-in')) history.replaceState(null, '', '/console/sign-in');
    return signInPage();
  }
  const state: State = { session: data.data, api: consoleClient(data.data.csrfToken) };
  if (location.pathname.startsWith('/console/sign-in')) history.replaceState(null, '', '/console/queue');
  window.onpopstate = () => void show(state);
  await show(state);
}

// A sign-in link opened in a tab that already shows the console only changes the fragment.
window.addEventListener('hashchange', () => void start());
void start();
