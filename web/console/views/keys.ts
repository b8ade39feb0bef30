import { html } from '../../shared/html';
import { ConsoleState, failure, render, secretBox, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

const SCOPES = [
  'service:proof:read', 'service:proof:read_private', 'service:proof:write', 'service:proof:publish',
  'service:proof:export', 'service:proof:submissions:write', 'service:signals:read', 'service:signals:write',
  'service:threads:read', 'service:threads:write', 'service:features:read', 'service:features:write',
  'service:inbox:read', 'service:rooms:read', 'service:rooms:write', 'service:sources:read',
] as const;
type Scope = (typeof SCOPES)[number];

export async function keysView(state: ConsoleState, target: HTMLElement): Promise<void> {
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
