import { SafeHtml, html } from '../../shared/html';
import { WallManifest, wallMarkup } from '../../wall/wall-markup';
import type { Schemas } from '../api';
import { ConsoleState, failure, isWriter, render, status, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

type Placement = Schemas['WorkspacePlacement'];
type PlacedItem = Schemas['PlacementItemWithEngagement'];

/** "2 × not_approved, 1 × revoked": why the excluded items do not render. */
function exclusionReasons(items: PlacedItem[]): string {
  const counts = new Map<string, number>();
  for (const reason of items.filter((i) => !i.eligible).flatMap((i) => (i.reasons.length ? i.reasons : ['unknown']))) {
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  return [...counts].map(([reason, n]) => `${n} × ${reason}`).join(', ');
}

/** What the public render manifest shows now, drawn by the wall's own markup; the placed items with today's decision. */
async function preview(state: ConsoleState, p: Placement, out: Element): Promise<void> {
  const [live, placed] = await Promise.all([
    state.api.GET('/api/public/proof/render/{id}', { params: { path: { id: p.id } } }),
    state.api.GET('/api/workspace/proof/placements/{id}/items', { params: { path: { id: p.id } } }),
  ]);
  if (!placed.data) return render(out, failure(placed.error, placed.response));
  const manifest = live.data?.manifest as unknown as WallManifest | undefined;
  const shown: SafeHtml = manifest
    ? (manifest.items.length ? wallMarkup(manifest, null) : html`<p>${M.placements.renderEmpty}</p>`)
    : html`<p>${M.placements.notLive(p.state)}</p>`;
  render(out, html`<section class="preview" aria-labelledby="preview-heading" data-preview="${p.id}">
<h2 id="preview-heading" tabindex="-1">${M.placements.previewOf(p.name)}</h2>
<h3>${M.placements.liveHeading}</h3><div class="render" data-field="render">${shown}</div>
<h3>${M.placements.placed}</h3>${placed.data.data.length === 0 ? html`<p>${M.placements.noItems}</p>` : html`<ul>${placed.data.data.map((i) => html`<li data-placed="${i.proofItemId}">${i.proofItemId}: ${i.eligible ? M.placements.eligible : M.placements.excluded(i.reasons.join(', '))}</li>`)}</ul>`}
</section>`);
  out.querySelector<HTMLElement>('#preview-heading')?.focus();
}

export async function placementsView(state: ConsoleState, target: HTMLElement): Promise<void> {
  const { data, error, response } = await state.api.GET('/api/workspace/proof/placements', { params: { query: { limit: 100 } } });
  if (!data) return render(target, html`<h1>${M.placements.heading}</h1>${failure(error, response)}`);
  const writer = isWriter(state.session);
  const placements = data.data;
  render(target, html`<h1>${M.placements.heading}</h1>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}<div id="placement-status"></div>
${placements.length === 0 ? html`<p>${M.placements.empty}</p>` : html`<table><caption>${M.placements.heading}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Type</th><th scope="col">Channel</th><th scope="col">Items</th><th scope="col">Published</th><th scope="col">Actions</th></tr></thead>
<tbody>${placements.map((p) => html`<tr data-placement="${p.id}"><td>${p.name}<br><span class="meta">${p.id}</span></td><td data-field="state">${p.state}</td><td>${p.placementType}</td><td>${p.channel}</td><td>${M.placements.items(p.itemCount)}</td><td>${p.publishedAt ? when(p.publishedAt) : ''}</td>
<td><button type="button" data-preview="${p.id}">${M.placements.preview} ${p.name}</button>${writer && p.state !== 'archived' ? html` <button type="button" data-check="${p.id}">${M.placements.checkPublish(p.name)}</button>` : ''}</td></tr>`)}</tbody></table>`}
<div id="placement-detail"></div>`);
  const notice = target.querySelector('#placement-status')!;
  const detail = target.querySelector('#placement-detail')!;
  const byId = new Map(placements.map((p) => [p.id, p]));
  target.querySelectorAll<HTMLButtonElement>('button[data-preview]').forEach((b) =>
    b.addEventListener('click', () => void preview(state, byId.get(b.dataset.preview!)!, detail)));
  target.querySelectorAll<HTMLButtonElement>('button[data-check]').forEach((b) => b.addEventListener('click', async () => {
    const p = byId.get(b.dataset.check!)!;
    const path = { id: p.id };
    // The dry run first: the same counts a publish answers, nothing written; the reasons come from today's decisions.
    const [dry, placed] = await Promise.all([
      state.api.POST('/api/workspace/proof/placements/{id}/publish', { params: { path, query: { dryRun: true } } }),
      state.api.GET('/api/workspace/proof/placements/{id}/items', { params: { path } }),
    ]);
    if (!dry.data) return render(notice, failure(dry.error, dry.response));
    const reasons = placed.data ? exclusionReasons(placed.data.data) : '';
    render(notice, html`<div class="notice ok dry-run" role="status" data-placement="${p.id}"><p data-field="dry-run">${M.placements.dryRun(dry.data.data.eligibleCount, dry.data.data.excludedCount, reasons)}</p>
<button type="button" id="confirm-publish">${M.placements.confirm(p.name)}</button> <button type="button" id="cancel-publish">${M.placements.cancel}</button></div>`);
    const confirm = notice.querySelector<HTMLButtonElement>('#confirm-publish')!;
    notice.querySelector('#cancel-publish')!.addEventListener('click', () => {
      render(notice, html``);
      b.focus();
    });
    confirm.addEventListener('click', async () => {
      confirm.disabled = true;
      const res = await state.api.POST('/api/workspace/proof/placements/{id}/publish', { params: { path } });
      if (!res.data) return render(notice, failure(res.error, res.response));
      await placementsView(state, target);
      render(target.querySelector('#placement-status')!, status(M.placements.published(res.data.data.eligibleCount, res.data.data.excludedCount)));
      await preview(state, { ...p, ...res.data.data.placement }, target.querySelector('#placement-detail')!);
    });
    confirm.focus();
  }));
}
