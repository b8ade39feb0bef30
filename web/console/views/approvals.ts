import { html } from '../../shared/html';
import { ConsoleState, failure, isWriter, render, status, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

/** Pending Rooms approvals (ROOMS.md §6): agent actions, promises, knowledge and appeals; owners and admins decide. */
export async function approvalsView(state: ConsoleState, target: HTMLElement): Promise<void> {
  const { data, error, response } = await state.api.GET('/api/workspace/rooms/approvals', { params: { query: { status: 'pending', limit: 100 } } });
  if (!data) return render(target, html`<h1>${M.approvals.heading}</h1>${failure(error, response)}`);
  const writer = isWriter(state.session);
  const kind = (k: string) => M.approvals.kinds[k] ?? k;
  render(target, html`<h1>${M.approvals.heading}</h1><p class="hint">${M.approvals.intro}</p>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}
<div id="approval-status"></div>
${data.data.length === 0 ? html`<p>${M.approvals.empty}</p>` : ''}
<ul class="cards">${data.data.map((a) => html`<li data-approval="${a.id}" data-subject="${a.subjectId}" aria-labelledby="apr-${a.id}">
<h2 id="apr-${a.id}">${kind(a.kind)}: <span data-field="preview">${a.action.preview}</span></h2>
<p class="meta">${M.approvals.subject(a.action.type, a.subjectId)} · ${M.approvals.meta(a.roomId, when(a.createdAt), a.expiresAt ? when(a.expiresAt) : null)}</p>
${writer ? html`<div class="actions">
  <form class="approve"><label>${M.approvals.note} <textarea name="note" maxlength="1000" rows="2"></textarea></label>
  <button type="submit">${M.approvals.approve(kind(a.kind))}</button></form>
  <form class="reject"><label>${M.approvals.reason} <textarea name="reason" required minlength="3" maxlength="2000" rows="2"></textarea></label>
  <button type="submit">${M.approvals.reject}</button></form>
</div>` : ''}</li>`)}</ul>`);
  const notice = target.querySelector('#approval-status')!;
  for (const li of target.querySelectorAll<HTMLLIElement>('li[data-approval]')) {
    const path = { approvalId: li.dataset.approval! };
    const decided = (res: { data?: unknown; error?: unknown; response: Response }, done: string) => {
      if (!res.data) return render(notice, failure(res.error, res.response));
      li.remove();
      render(notice, status(done));
    };
    li.querySelector('form.approve')?.addEventListener('submit', async (event) => {
      event.preventDefault();
      const note = String(new FormData(event.target as HTMLFormElement).get('note') ?? '').trim();
      decided(await state.api.POST('/api/v1/approvals/{approvalId}/approve', { params: { path }, body: note ? { note } : {} }), M.approvals.approved);
    });
    li.querySelector('form.reject')?.addEventListener('submit', async (event) => {
      event.preventDefault();
      const reason = String(new FormData(event.target as HTMLFormElement).get('reason') ?? '').trim();
      decided(await state.api.POST('/api/v1/approvals/{approvalId}/reject', { params: { path }, body: { reason } }), M.approvals.rejected);
    });
  }
}
