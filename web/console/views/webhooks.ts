import { html } from '../../shared/html';
import { ConsoleState, failure, render, secretBox, status, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

export async function webhooksView(state: ConsoleState, target: HTMLElement): Promise<void> {
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
<button type="button" data-rotate-secret="${e.id}">${M.webhooks.rotate} (${e.url})</button>
<button type="button" data-test-event="${e.id}">${M.webhookTest.send(e.url)}</button></li>`)}</ul>`}
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
  target.querySelectorAll<HTMLButtonElement>('button[data-test-event]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/workspace/webhooks/endpoints/{id}/test', { params: { path: { id: b.dataset.testEvent! } } });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await webhooksView(state, target);
    render(target.querySelector('#hook-status')!, status(M.webhookTest.sent(res.data.data.id)));
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
