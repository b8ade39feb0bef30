import { html } from '../../shared/html';
import { ConsoleState, duration, failure, isWriter, render, status, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

export async function revocationsView(state: ConsoleState, target: HTMLElement): Promise<void> {
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
