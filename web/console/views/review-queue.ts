import { SafeHtml, html } from '../../shared/html';
import { ConsoleState, failure, isWriter, onLeave, render, status, versionWords, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

function diffList(diff: Record<string, unknown>): SafeHtml {
  const entries = Object.entries(diff);
  if (entries.length === 0) return html`<p>${M.queue.noDiff}</p>`;
  return html`<dl class="diff">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${typeof v === 'string' ? v : JSON.stringify(v)}</dd>`)}</dl>`;
}

export async function queueView(state: ConsoleState, target: HTMLElement): Promise<void> {
  const { data, error, response } = await state.api.GET('/api/workspace/proof/review-queue', { params: { query: { limit: 50 } } });
  if (!data) return render(target, html`<h1>${M.queue.heading}</h1>${failure(error, response)}`);
  const writer = isWriter(state.session);
  render(target, html`<h1>${M.queue.heading}</h1>
<p class="hint">${M.queue.shortcuts}</p>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}
<div id="queue-status"></div>
${data.data.length === 0 ? html`<p>${M.queue.empty}</p>` : ''}
<ol class="queue">${data.data.map((r, i) => html`<li class="request" tabindex="-1" data-item="${r.proofItemId}" data-version="${r.versionId}" aria-labelledby="req-${r.id}">
  <h2 id="req-${r.id}">${r.item.type} · ${r.proofItemId} · ${M.queue.version(r.version.versionNumber)} <span class="meta">${M.queue.requested(when(r.requestedAt))}</span></h2>
  <div class="compare">
    <section aria-label="${M.queue.original}"><h3>${M.queue.original}</h3>${r.original ? html`<pre class="words">${versionWords(r.original)}</pre>` : html`<p>${M.queue.same}</p>`}</section>
    <section aria-label="${M.queue.derivative}"><h3>${M.queue.derivative}</h3><pre class="words" data-field="wording">${versionWords(r.version)}</pre></section>
  </div>
  <h3>${M.queue.diff}</h3>${diffList(r.version.semanticDiff as Record<string, unknown>)}
  <h3>${M.queue.consent} (${r.consent.status})</h3>
  ${r.consent.grants.length === 0 ? html`<p>${M.queue.noGrants}</p>` : html`<ul>${r.consent.grants.map((g) => html`<li>${M.queue.grant(g.state, g.channels.join(', '), g.displayMode, g.paidUseAllowed)}</li>`)}</ul>`}
  ${writer ? html`<div class="actions">
    <button type="button" class="approve">${M.queue.approve(r.version.versionNumber)}</button>
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
  onLeave(() => document.removeEventListener('keydown', onKey));
  if (items.length) items[0].classList.add('current');
}
