import { SafeHtml, html } from '../../shared/html';
import type { Schemas } from '../api';
import { followInside, go, openedId } from '../go';
import { ConsoleState, failure, isWriter, render, status, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

const T = M.threads;
const STATES = ['open', 'pending', 'resolved', 'closed'] as const;
type ThreadState = (typeof STATES)[number];
type Filter = { state?: ThreadState; owner?: string };

// The filter outlives a visit to a thread, so going back to the list shows what was asked for.
let filter: Filter = {};

const ownerName = (state: ConsoleState, ownerId: string | null) =>
  ownerId === null ? T.unassigned : ownerId === state.session.teammateId ? T.me : ownerId;

function suggestion(s: Schemas['SimilarCandidate'] | null): SafeHtml {
  if (!s) return html`<p>${T.noSuggestion}</p>`;
  return html`<p data-field="suggestion"><strong>${s.title}</strong></p>
<p>${T.score(Math.round(s.score * 100))} · ${T.matched(s.matched.join(', '))}</p>
${s.type === 'feature' ? html`<p><a href="/console/features/${s.id}" data-go>${T.openFeature(s.title)}</a></p>` : html`<p class="hint">${T.similarSignal}</p>`}`;
}

async function threadDetail(state: ConsoleState, id: string): Promise<SafeHtml> {
  const { data, error, response } = await state.api.GET('/api/workspace/threads/{id}', { params: { path: { id } } });
  if (!data) return failure(error, response);
  const t = data.data;
  const writer = isWriter(state.session);
  const me = state.session.teammateId;
  return html`<div class="thread-detail" data-thread="${t.id}">
<section aria-labelledby="thread-heading"><h2 id="thread-heading" tabindex="-1">${t.subject}</h2>
<p class="meta">${T.summary(t.state, ownerName(state, t.ownerId), t.endUserId)}${t.nextUpdateAt ? html` · ${T.promised(when(t.nextUpdateAt))}` : ''}</p>
<ol class="messages">${t.messages.map((m) => html`<li class="${m.visibility}" data-message="${m.id}"><p class="meta">${m.authorType === 'end_user' ? T.customer : T.teammate}${m.visibility === 'internal' ? html` · <strong>${T.internal}</strong>` : ''} · ${when(m.createdAt)}</p><p class="body">${m.body}</p></li>`)}</ol>
<form id="thread-reply"><fieldset><legend>${T.write}</legend>
<label>${T.message} <textarea name="body" required maxlength="10000" rows="3"></textarea></label>
<label><input type="radio" name="visibility" value="customer" checked> ${T.toCustomer}</label>
<label><input type="radio" name="visibility" value="internal"> ${T.asNote}</label>
<button type="submit">${T.send}</button></fieldset></form>
${writer ? html`<form id="thread-owner"><fieldset><legend>${T.ownerAndState}</legend>
<label>${T.owner} <select name="ownerId"><option value="">${T.unassigned}</option><option value="${me}" ${t.ownerId === me ? 'selected' : ''}>${T.me}</option>
${t.ownerId && t.ownerId !== me ? html`<option value="${t.ownerId}" selected>${t.ownerId}</option>` : ''}</select></label>
<label>${T.state} <select name="state">${STATES.map((s) => html`<option ${s === t.state ? 'selected' : ''}>${s}</option>`)}</select></label>
<button type="submit">${T.save}</button></fieldset></form>
<form id="thread-promise"><fieldset><legend>${T.promise}</legend>
<label>${T.promiseBy} <input type="datetime-local" name="nextUpdateAt" required></label>
<button type="submit">${T.promiseSubmit}</button>${t.nextUpdateAt ? html` <button type="button" id="withdraw-promise">${T.withdraw}</button>` : ''}</fieldset></form>` : html`<p class="hint">${T.memberHint}</p>`}
</section>
<aside aria-labelledby="suggestion-heading" class="suggestion"><h2 id="suggestion-heading">${T.suggestion}</h2>${suggestion(t.duplicateSuggestion)}</aside>
</div>`;
}

export async function threadsView(state: ConsoleState, target: HTMLElement): Promise<void> {
  const opened = openedId();
  const [list, detail] = await Promise.all([
    state.api.GET('/api/workspace/threads', { params: { query: { limit: 50, ...filter } } }),
    opened ? threadDetail(state, opened) : Promise.resolve(null),
  ]);
  if (!list.data) return render(target, html`<h1>${T.heading}</h1>${failure(list.error, list.response)}`);
  const me = state.session.teammateId;
  render(target, html`<h1>${T.heading}</h1><div id="thread-status"></div>
<form id="thread-filter" class="inline"><label>${T.state} <select name="state"><option value="">${T.any}</option>${STATES.map((s) => html`<option ${s === filter.state ? 'selected' : ''}>${s}</option>`)}</select></label>
<label>${T.owner} <select name="owner"><option value="">${T.anyone}</option><option value="${me}" ${filter.owner === me ? 'selected' : ''}>${T.me}</option><option value="unassigned" ${filter.owner === 'unassigned' ? 'selected' : ''}>${T.unassigned}</option></select></label>
<button type="submit">${T.filter}</button></form>
${list.data.data.length === 0 ? html`<p>${T.empty}</p>` : html`<table><caption>${T.heading}</caption>
<thead><tr><th scope="col">${T.subject}</th><th scope="col">${T.state}</th><th scope="col">${T.owner}</th><th scope="col">${T.nextUpdate}</th><th scope="col">${T.updated}</th></tr></thead>
<tbody>${list.data.data.map((t) => html`<tr data-thread-row="${t.id}" ${t.id === opened ? html`aria-current="true"` : ''}><td><a href="/console/threads/${t.id}" data-go>${t.subject}</a></td><td>${t.state}</td><td>${ownerName(state, t.ownerId)}</td><td>${t.nextUpdateAt ? when(t.nextUpdateAt) : ''}</td><td>${when(t.updatedAt)}</td></tr>`)}</tbody></table>`}
${detail ?? ''}`);
  followInside(target);
  const notice = target.querySelector('#thread-status')!;
  target.querySelector<HTMLFormElement>('#thread-filter')!.addEventListener('submit', (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    filter = { state: (String(form.get('state')) || undefined) as ThreadState | undefined, owner: String(form.get('owner')) || undefined };
    go('/console/threads');
  });
  if (!opened || !detail) return;
  const again = async (done: SafeHtml) => {
    await threadsView(state, target);
    render(target.querySelector('#thread-status')!, done);
  };
  target.querySelector<HTMLElement>('#thread-heading')?.focus();
  target.querySelector<HTMLFormElement>('#thread-reply')?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const visibility = String(form.get('visibility')) as 'customer' | 'internal';
    const res = await state.api.POST('/api/workspace/threads/{id}/messages',
      { params: { path: { id: opened } }, body: { body: String(form.get('body')), visibility } });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await again(status(visibility === 'customer' ? T.replied : T.noted));
  });
  target.querySelector<HTMLFormElement>('#thread-owner')?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const res = await state.api.PATCH('/api/workspace/threads/{id}', {
      params: { path: { id: opened } }, body: { ownerId: String(form.get('ownerId')) || null, state: String(form.get('state')) as ThreadState },
    });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await again(status(T.saved));
  });
  const promise = async (nextUpdateAt: string | null) => {
    const res = await state.api.PATCH('/api/workspace/threads/{id}', { params: { path: { id: opened } }, body: { nextUpdateAt } });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await again(status(nextUpdateAt ? T.promisedDone : T.withdrawn));
  };
  target.querySelector<HTMLFormElement>('#thread-promise')?.addEventListener('submit', (event) => {
    event.preventDefault();
    const local = String(new FormData(event.target as HTMLFormElement).get('nextUpdateAt'));
    void promise(new Date(local).toISOString());
  });
  target.querySelector('#withdraw-promise')?.addEventListener('click', () => void promise(null));
}
