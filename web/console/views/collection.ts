import { html } from '../../shared/html';
import { ConsoleState, failure, isWriter, render, secretBox, status, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

const CHANNELS = ['link', 'email', 'in_app', 'room', 'support', 'survey', 'api'] as const;
type Channel = (typeof CHANNELS)[number];

const qrPath = (id: string, download = false) => `/api/proof/collect/forms/${encodeURIComponent(id)}/qr${download ? '?download=1' : ''}`;

/** Collection flows (publish a draft, versions, the live link's QR code) and personal requests (COLLECTION.md §5). */
export async function collectionView(state: ConsoleState, target: HTMLElement): Promise<void> {
  const [flows, requests] = await Promise.all([
    state.api.GET('/api/proof/collect/forms', { params: { query: { limit: 100 } } }),
    state.api.GET('/api/proof/collect/requests', { params: { query: { limit: 50 } } }),
  ]);
  if (!flows.data || !requests.data) {
    return render(target, html`<h1>${M.collection.heading}</h1>${failure(flows.error ?? requests.error, flows.data ? requests.response : flows.response)}`);
  }
  const writer = isWriter(state.session);
  const live = flows.data.data.filter((f) => f.liveVersionId);
  const flowName = new Map(flows.data.data.map((f) => [f.id, f.name]));
  render(target, html`<h1>${M.collection.heading}</h1>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}<div id="collection-status"></div>
<h2>${M.collection.flows}</h2>
${flows.data.data.length === 0 ? html`<p>${M.collection.noFlows}</p>` : html`<ul class="cards">${flows.data.data.map((f) => html`<li data-flow="${f.id}" aria-labelledby="flow-${f.id}">
<h3 id="flow-${f.id}">${f.name} <span class="meta">${f.id}</span></h3>
<p data-field="flow-meta">${f.state} · ${M.collection.liveUrl}: ${f.liveVersionId ? html`<a href="${f.liveUrl}">${f.liveUrl}</a>` : M.collection.neverPublished}</p>
<p class="meta">${M.collection.allowance(f.allowance.used, f.allowance.limit, f.allowance.month)}</p>
<div class="versions" data-versions="${f.id}"></div>
${f.liveVersionId ? html`<p class="qr"><img src="${qrPath(f.id)}" width="160" height="160" alt="${M.collection.qrAlt(f.liveUrl)}"><br>
<a href="${qrPath(f.id, true)}" download="${f.publicId}-qr.svg" data-qr="${f.id}">${M.collection.qrDownload(f.name)}</a></p>` : ''}
${writer && f.state !== 'archived' ? html`<button type="button" data-publish="${f.id}" data-revision="${f.draftRevision}">${M.collection.publish(f.name, f.draftRevision)}</button>` : ''}
</li>`)}</ul>`}
<h2>${M.collection.requests}</h2>
${writer ? (live.length === 0 ? html`<p class="hint">${M.collection.needLive}</p>` : html`<form id="create-request"><fieldset><legend>${M.collection.create}</legend>
<label>${M.collection.flow} <select name="flowId">${live.map((f) => html`<option value="${f.id}">${f.name}</option>`)}</select></label>
<label>${M.collection.channel} <select name="channel">${CHANNELS.map((c) => html`<option>${c}</option>`)}</select></label>
<label>${M.collection.email} <input name="email" type="email" autocomplete="off"></label>
<label>${M.collection.personRef} <input name="personRef" autocomplete="off" maxlength="200"></label>
<label>${M.collection.name} <input name="name" autocomplete="off" maxlength="200"></label>
<label>${M.collection.message} <textarea name="message" maxlength="4000" rows="3"></textarea></label>
<button type="submit">${M.collection.submit}</button></fieldset></form>`) : ''}
${requests.data.data.length === 0 ? html`<p>${M.collection.noRequests}</p>` : html`<table><caption>${M.collection.requests}</caption>
<thead><tr><th scope="col">Request</th><th scope="col">Person</th><th scope="col">Flow</th><th scope="col">Channel</th><th scope="col">State</th><th scope="col">Created</th></tr></thead>
<tbody>${requests.data.data.map((r) => html`<tr data-request="${r.id}"><td>${r.id}</td><td>${M.collection.recipient(r.recipient)}</td><td>${flowName.get(r.flowId) ?? r.flowId}</td><td>${r.channel}</td><td data-field="status">${r.status}</td><td>${when(r.createdAt)}</td></tr>`)}</tbody></table>`}`);
  const notice = target.querySelector('#collection-status')!;

  await Promise.all(live.map(async (f) => {
    const out = target.querySelector(`[data-versions="${f.id}"]`)!;
    const res = await state.api.GET('/api/proof/collect/forms/{id}', { params: { path: { id: f.id } } });
    if (!res.data) return render(out, failure(res.error, res.response));
    render(out, html`<h4>${M.collection.versions}</h4><ol>${res.data.data.versions.map((v) => html`<li>${M.collection.version(v.versionNumber, v.contentHash, when(v.publishedAt))}</li>`)}</ol>`);
  }));

  target.querySelectorAll<HTMLButtonElement>('button[data-publish]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/proof/collect/forms/{id}', {
      params: { path: { id: b.dataset.publish! } }, body: { draftRevision: Number(b.dataset.revision) },
    });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await collectionView(state, target);
    render(target.querySelector('#collection-status')!, status(M.collection.publishedVersion(res.data.data.flowVersion.versionNumber)));
    target.querySelector<HTMLAnchorElement>(`a[data-qr="${b.dataset.publish!}"]`)?.focus();
  }));

  target.querySelector<HTMLFormElement>('#create-request')?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    const res = await state.api.POST('/api/proof/collect/requests', {
      body: {
        flowId: String(form.get('flowId')), channel: String(form.get('channel')) as Channel,
        recipient: { email: text('email'), personRef: text('personRef'), name: text('name') }, message: text('message'),
      },
    });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await collectionView(state, target);
    render(target.querySelector('#collection-status')!, secretBox(M.collection.created, res.data.data.linkUrl));
  });
}
