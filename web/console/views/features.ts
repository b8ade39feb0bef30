import { SafeHtml, html } from '../../shared/html';
import type { Schemas } from '../api';
import { followInside, openedId } from '../go';
import { ConsoleState, failure, isWriter, render, status } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

const F = M.features;
type Feature = Schemas['Feature'];

const figures = (f: Feature) => F.figures(f.score, f.voteCount, f.followerCount, f.signalCount);

async function featureDetail(state: ConsoleState, id: string): Promise<SafeHtml> {
  const [one, similar] = await Promise.all([
    state.api.GET('/api/workspace/features/{id}', { params: { path: { id } } }),
    state.api.GET('/api/workspace/features/{id}/similar', { params: { path: { id } } }),
  ]);
  if (!one.data) return failure(one.error, one.response);
  const f = one.data.data;
  const writer = isWriter(state.session);
  const candidates = similar.data?.data ?? [];
  return html`<section class="feature-detail" data-feature="${f.id}" aria-labelledby="feature-heading">
<h2 id="feature-heading" tabindex="-1">${f.title}</h2>
<p class="meta">${f.state} · <span data-field="figures">${figures(f)}</span> · ${f.publicBoard ? F.onBoard : F.offBoard}</p>
<p>${f.problem}</p>
${f.mergedInto ? html`<p class="notice ok">${F.mergedInto} <a href="/console/features/${f.mergedInto}" data-go>${f.mergedInto}</a></p>
${writer ? html`<button type="button" data-unmerge="${f.id}">${F.unmerge(f.title)}</button>` : ''}` : ''}
<h3>${F.evidence}</h3>
${f.evidence.length === 0 ? html`<p>${F.noEvidence}</p>` : html`<ul>${f.evidence.map((e) => html`<li>${e.category} · ${e.urgency}: <a href="/console/threads/${e.threadId}" data-go>${e.title}</a>${e.summary ? html` — ${e.summary}` : ''}</li>`)}</ul>`}
<h3>${F.similar}</h3>
${similar.data ? '' : failure(similar.error, similar.response)}
${candidates.length === 0 ? html`<p>${F.noSimilar}</p>` : html`<ul class="candidates">${candidates.map((c) => html`<li data-candidate="${c.id}">
<strong>${c.title}</strong> <span class="meta">(${c.type}) ${F.score(Math.round(c.score * 100))} · ${F.matched(c.matched.join(', '))}${c.suggested ? html` · ${F.suggested}` : ''}</span>
${c.type === 'feature' ? html`<a href="/console/features/${c.id}" data-go>${F.open(c.title)}</a>` : ''}
${writer && c.type === 'feature' && !f.mergedInto ? html`<button type="button" data-merge="${c.id}" data-title="${c.title}">${F.merge(c.title, f.title)}</button>
<button type="button" data-not-duplicate="${c.id}">${F.notDuplicate(c.title)}</button>` : ''}</li>`)}</ul>`}
</section>
<dialog id="merge-confirm" aria-labelledby="merge-question"><form method="dialog"><p id="merge-question"></p>
<button value="merge" autofocus>${F.confirmMerge}</button> <button value="cancel">${F.cancel}</button></form></dialog>`;
}

export async function featuresView(state: ConsoleState, target: HTMLElement): Promise<void> {
  const opened = openedId();
  const [list, merged, detail] = await Promise.all([
    state.api.GET('/api/workspace/features', { params: { query: { limit: 100 } } }),
    state.api.GET('/api/workspace/features', { params: { query: { limit: 100, merged: 'true' } } }),
    opened ? featureDetail(state, opened) : Promise.resolve(null),
  ]);
  if (!list.data || !merged.data) {
    return render(target, html`<h1>${F.heading}</h1>${failure(list.error ?? merged.error, list.data ? merged.response : list.response)}`);
  }
  const writer = isWriter(state.session);
  const titles = new Map(list.data.data.map((f) => [f.id, f.title]));
  render(target, html`<h1>${F.heading}</h1>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}<div id="feature-status"></div>
${detail ?? ''}
${list.data.data.length === 0 ? html`<p>${F.empty}</p>` : html`<table><caption>${F.heading}</caption>
<thead><tr><th scope="col">${F.title}</th><th scope="col">${F.state}</th><th scope="col">${F.scoreHeading}</th><th scope="col">${F.votes}</th><th scope="col">${F.evidence}</th><th scope="col">${F.board}</th></tr></thead>
<tbody>${list.data.data.map((f) => html`<tr data-feature-row="${f.id}"><td><a href="/console/features/${f.id}" data-go>${f.title}</a></td><td>${f.state}</td><td>${f.score}</td><td data-field="votes">${f.voteCount}</td><td>${f.signalCount}</td>
<td>${writer ? html`<label><input type="checkbox" data-board="${f.id}" ${f.publicBoard ? 'checked' : ''}> ${F.boardToggle(f.title)}</label>` : f.publicBoard ? F.onBoard : F.offBoard}</td></tr>`)}</tbody></table>`}
<h2>${F.mergedHeading}</h2>
${merged.data.data.length === 0 ? html`<p>${F.noneMerged}</p>` : html`<ul>${merged.data.data.map((f) => html`<li data-merged="${f.id}"><a href="/console/features/${f.id}" data-go>${f.title}</a> → ${titles.get(f.mergedInto ?? '') ?? f.mergedInto}
${writer ? html`<button type="button" data-unmerge="${f.id}">${F.unmerge(f.title)}</button>` : ''}</li>`)}</ul>`}`);
  followInside(target);
  const notice = target.querySelector('#feature-status')!;
  const again = async (done: SafeHtml, path?: string) => {
    if (path && path !== location.pathname) history.pushState(null, '', path);
    await featuresView(state, target);
    render(target.querySelector('#feature-status')!, done);
  };
  if (opened && detail) target.querySelector<HTMLElement>('#feature-heading')?.focus();
  target.querySelectorAll<HTMLInputElement>('input[data-board]').forEach((box) => box.addEventListener('change', async () => {
    const res = await state.api.PATCH('/api/workspace/features/{id}', { params: { path: { id: box.dataset.board! } }, body: { publicBoard: box.checked } });
    render(notice, res.data ? status(res.data.data.publicBoard ? F.shown : F.hidden) : failure(res.error, res.response));
  }));
  target.querySelectorAll<HTMLButtonElement>('button[data-unmerge]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/workspace/features/{id}/unmerge', { params: { path: { id: b.dataset.unmerge! } } });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await again(status(F.unmerged(res.data.data.feature.title)), `/console/features/${res.data.data.feature.id}`);
  }));
  target.querySelectorAll<HTMLButtonElement>('button[data-not-duplicate]').forEach((b) => b.addEventListener('click', async () => {
    const res = await state.api.POST('/api/workspace/features/{id}/not-duplicate',
      { params: { path: { id: opened! } }, body: { featureId: b.dataset.notDuplicate! } });
    if (!res.data) return render(notice, failure(res.error, res.response));
    await again(status(F.keptApart));
  }));
  const dialog = target.querySelector<HTMLDialogElement>('#merge-confirm');
  target.querySelectorAll<HTMLButtonElement>('button[data-merge]').forEach((b) => b.addEventListener('click', () => {
    const title = target.querySelector('#feature-heading')!.textContent ?? '';
    dialog!.querySelector('#merge-question')!.textContent = F.mergeQuestion(b.dataset.title!, title);
    dialog!.returnValue = '';
    dialog!.onclose = async () => {
      if (dialog!.returnValue !== 'merge') return b.focus();
      const res = await state.api.POST('/api/workspace/features/{id}/merge', { params: { path: { id: b.dataset.merge! } }, body: { intoFeatureId: opened! } });
      if (!res.data) return render(notice, failure(res.error, res.response));
      await again(status(F.mergedDone(res.data.data.feature.title, res.data.data.into.voteCount)));
    };
    dialog!.showModal();
  }));
}
