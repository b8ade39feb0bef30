import { SafeHtml, html } from '../../shared/html';
import type { Schemas } from '../api';
import { ConsoleState, failure, isWriter, onLeave, render, status, versionWords, when } from '../view-kit';
import { CONSOLE_MESSAGES as M } from '../messages';

// The consent terms the API accepts (consentBody in api/proof/schemas.ts); the client's types check the spelling.
const STATUSES = ['submitted', 'in_review', 'approved', 'rejected', 'revoked', 'deleted'] as const;
const DISPLAY_MODES = ['full_name', 'first_name', 'initials', 'anonymous'] as const;
const IDENTITY_FIELDS = ['name', 'company', 'title', 'photo', 'logo', 'location'] as const;
const CHANNELS = ['website', 'in_app', 'email', 'sales', 'social_organic', 'paid_ads', 'case_study', 'press'] as const;
const MEDIA = ['text', 'audio', 'video', 'image'] as const;
const PAGE = 25;

type Detail = Schemas['WorkspaceProofItemDetail'];
type Asset = Schemas['WorkspaceProofAsset'];

const checkboxes = (name: string, values: readonly string[], checked: readonly string[]) =>
  values.map((v) => html`<label><input type="checkbox" name="${name}" value="${v}" ${checked.includes(v) ? html`checked` : ''}> ${v}</label>`);

function consentForm(d: Detail): SafeHtml {
  const latest = d.versions[d.versions.length - 1];
  const chosen = d.item.approvedPublicVersionId ?? latest?.id;
  return html`<form id="consent-form"><fieldset><legend>${M.stories.record}</legend><p class="hint">${M.stories.recordHint}</p>
<label>${M.stories.forVersion} <select name="versionId">${d.versions.map((v) => html`<option value="${v.id}" ${v.id === chosen ? html`selected` : ''}>${M.stories.versionLabel(v.versionNumber)} (${v.approvalState})</option>`)}</select></label>
<label>${M.stories.displayMode} <select name="displayMode">${DISPLAY_MODES.map((m) => html`<option>${m}</option>`)}</select></label>
<fieldset class="options"><legend>${M.stories.identityFields}</legend>${checkboxes('identityFields', IDENTITY_FIELDS, ['name', 'company', 'title'])}</fieldset>
<fieldset class="options"><legend>${M.stories.channels}</legend>${checkboxes('channels', CHANNELS, ['website'])}</fieldset>
<fieldset class="options"><legend>${M.stories.products}</legend>
<label><input type="radio" name="products" value="all" checked> ${M.stories.allProducts}</label>
<label><input type="radio" name="products" value="own"> ${M.stories.thisProduct(d.item.productId)}</label></fieldset>
<fieldset class="options"><legend>${M.stories.media}</legend>${checkboxes('media', MEDIA, ['text'])}</fieldset>
<label>${M.stories.geography} <input name="geography" value="*" autocomplete="off"></label>
<label>${M.stories.validUntil} <input name="validUntil" type="date"></label>
<label><input type="checkbox" name="paidUseAllowed"> ${M.stories.paidUse}</label>
<label><input type="checkbox" name="translationAllowed"> ${M.stories.translation}</label>
<label><input type="checkbox" name="customerApprovedWording" checked> ${M.stories.approvedWording}</label>
<button type="submit">${M.stories.submit}</button></fieldset></form>`;
}

function detailMarkup(d: Detail, writer: boolean): SafeHtml {
  const numberOf = new Map(d.versions.map((v) => [v.id, v.versionNumber]));
  return html`<section class="story-detail" aria-labelledby="story-heading" data-story="${d.item.id}">
<h2 id="story-heading" tabindex="-1">${M.stories.detailOf(d.item.type, d.item.id, d.item.status)}</h2>
<h3>${M.stories.versions}</h3><ol class="versions">${d.versions.map((v) => html`<li data-version="${v.id}">
<p class="meta">${M.stories.version(v.versionNumber, v.isOriginal, v.createdByType, v.approvalState, when(v.createdAt))}</p>
${versionWords(v) ? html`<pre class="words">${versionWords(v)}</pre>` : html`<p>${M.stories.noWords}</p>`}</li>`)}</ol>
<h3>${M.stories.consent(d.consent.status)}</h3>
${d.consent.grants.length === 0 ? html`<p>${M.stories.noGrants}</p>` : html`<ul class="grants">${d.consent.grants.map((g) => html`<li data-grant="${g.id}">${M.stories.grant(
    g.state, M.stories.versionLabel(numberOf.get(g.approvedVersionId) ?? 0), g.channels.join(', '), g.displayMode, g.paidUseAllowed,
    g.validUntil ? when(g.validUntil) : null)}</li>`)}</ul>`}
${writer && d.item.status !== 'revoked' && d.versions.length > 0 ? consentForm(d) : ''}
</section>`;
}

function assetMarkup(a: Asset, writer: boolean): SafeHtml {
  const c = a.content as { quote?: unknown; title?: unknown };
  const shown = typeof c.quote === 'string' ? c.quote : typeof c.title === 'string' ? c.title : '';
  return html`<li data-asset="${a.id}" aria-labelledby="asset-${a.id}"><h3 id="asset-${a.id}">${M.stories.assetHeading(a.assetType, a.id)} <span class="meta">${when(a.createdAt)}</span></h3>
${shown ? html`<pre class="words">${shown}</pre>` : ''}
<p class="meta">${M.stories.sources(a.sourceProofIds.join(', '))} · ${M.stories.eligibleOn(a.channelEligibility.join(', '))}</p>
${writer ? html`<button type="button" data-approve-asset="${a.id}">${M.stories.approveAsset(a.assetType, a.id)}</button>` : ''}</li>`;
}

/** The form's terms as consentBody wants them; the API validates them again and says what is wrong. */
function termsOf(form: FormData, productId: string) {
  const all = <T extends string>(name: string) => form.getAll(name).map(String) as T[];
  const until = String(form.get('validUntil') ?? '');
  return {
    displayMode: String(form.get('displayMode')) as (typeof DISPLAY_MODES)[number],
    identityFields: all<(typeof IDENTITY_FIELDS)[number]>('identityFields'),
    channels: all<(typeof CHANNELS)[number]>('channels'),
    products: form.get('products') === 'own' ? { ids: [productId] } : { all: true },
    media: all<(typeof MEDIA)[number]>('media'),
    paidUseAllowed: form.has('paidUseAllowed'),
    translationAllowed: form.has('translationAllowed'),
    geography: String(form.get('geography') ?? '').split(',').map((g) => g.trim()).filter(Boolean),
    validUntil: until ? `${until}T23:59:59.999Z` : null,
    customerApprovedWording: form.has('customerApprovedWording'),
  };
}

/**
 * The workspace's stories (versions, consent grants, recording consent), its draft assets to approve and the
 * owner's raw export (docs/platform.md#the-console).
 */
export async function storiesView(state: ConsoleState, target: HTMLElement): Promise<void> {
  const writer = isWriter(state.session);
  const owner = state.session.role === 'owner';
  const query: { status?: (typeof STATUSES)[number]; productId?: string; cursor?: string } = {};
  render(target, html`<h1>${M.stories.heading}</h1><p class="hint">${M.stories.intro}</p>${writer ? '' : html`<p class="hint">${M.readOnly}</p>`}
<div id="stories-status"></div>
<form id="story-filter" class="inline"><fieldset><legend>${M.stories.filter}</legend>
<label>${M.stories.status} <select name="status"><option value="">${M.stories.anyStatus}</option>${STATUSES.map((s) => html`<option>${s}</option>`)}</select></label>
<label>${M.stories.product} <input name="productId" autocomplete="off" maxlength="100" list="story-products"></label>
<button type="submit">${M.stories.show}</button></fieldset></form>
<datalist id="story-products"></datalist>
<div id="story-list"></div><div id="story-detail"></div>
<h2>${M.stories.assets}</h2><p class="hint">${M.stories.assetsIntro}</p><div id="asset-list"></div>
<h2>${M.stories.exportHeading}</h2><p class="hint">${M.stories.exportIntro}</p>
${owner ? html`<form id="raw-export" class="inline"><label>${M.stories.exportProduct} <input name="productId" required autocomplete="off" maxlength="100" list="story-products"></label>
<button type="submit">${M.stories.exportSubmit}</button></form><div id="raw-export-result"></div>` : html`<p class="hint">${M.stories.exportOwnerOnly}</p>`}`);
  const notice = target.querySelector('#stories-status')!;
  const list = target.querySelector<HTMLElement>('#story-list')!;
  const detail = target.querySelector<HTMLElement>('#story-detail')!;
  const assets = target.querySelector<HTMLElement>('#asset-list')!;
  const products = new Set<string>();
  let downloadUrl: string | null = null;
  onLeave(() => {
    if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  });

  const open = async (id: string): Promise<void> => {
    const res = await state.api.GET('/api/workspace/proof/items/{id}', { params: { path: { id } } });
    if (!res.data) return render(detail, failure(res.error, res.response));
    const d = res.data.data;
    render(detail, detailMarkup(d, writer));
    detail.querySelector<HTMLElement>('#story-heading')!.focus();
    detail.querySelector<HTMLFormElement>('#consent-form')?.addEventListener('submit', async (event) => {
      event.preventDefault();
      const form = new FormData(event.target as HTMLFormElement);
      const versionId = String(form.get('versionId'));
      const granted = await state.api.POST('/api/workspace/proof/items/{id}/consents', {
        params: { path: { id } }, body: { versionId, consent: termsOf(form, d.item.productId) },
      });
      if (!granted.data) return render(notice, failure(granted.error, granted.response));
      await open(id);
      const n = d.versions.find((v) => v.id === versionId)?.versionNumber ?? 0;
      render(notice, status(M.stories.recorded(n, granted.data.data.id)));
    });
  };

  const drawItems = async (): Promise<void> => {
    const res = await state.api.GET('/api/workspace/proof/items', { params: { query: { limit: PAGE, ...query } } });
    if (!res.data) return render(list, failure(res.error, res.response));
    const page = res.data;
    page.data.forEach((i) => products.add(i.productId));
    render(target.querySelector('#story-products')!, html`${[...products].map((p) => html`<option value="${p}"></option>`)}`);
    render(list, page.data.length === 0 ? html`<p>${M.stories.empty}</p>` : html`<table><caption>${M.stories.heading}</caption>
<thead><tr><th scope="col">${M.stories.story}</th><th scope="col">${M.stories.type}</th><th scope="col">${M.stories.status}</th><th scope="col">${M.stories.created}</th><th scope="col">${M.stories.actions}</th></tr></thead>
<tbody>${page.data.map((i) => html`<tr data-item="${i.id}"><td>${i.excerpt ?? M.stories.noExcerpt}<br><span class="meta">${i.id} · ${i.productId}</span></td><td>${i.type}</td><td data-field="status">${i.status}</td><td>${when(i.createdAt)}</td>
<td><button type="button" data-open="${i.id}">${M.stories.open(i.id)}</button></td></tr>`)}</tbody></table>
${query.cursor ? html`<button type="button" id="stories-first">${M.stories.first}</button> ` : ''}${page.nextCursor ? html`<button type="button" id="stories-next" data-cursor="${page.nextCursor}">${M.stories.next}</button>` : ''}`);
    list.querySelectorAll<HTMLButtonElement>('button[data-open]').forEach((b) => b.addEventListener('click', () => void open(b.dataset.open!)));
    const turn = (cursor: string | undefined) => {
      query.cursor = cursor;
      void drawItems();
    };
    list.querySelector<HTMLButtonElement>('#stories-next')?.addEventListener('click', (event) => turn((event.target as HTMLElement).dataset.cursor));
    list.querySelector<HTMLButtonElement>('#stories-first')?.addEventListener('click', () => turn(undefined));
  };

  const drawAssets = async (): Promise<void> => {
    const res = await state.api.GET('/api/workspace/proof/assets', { params: { query: { state: 'draft', limit: 50 } } });
    if (!res.data) return render(assets, failure(res.error, res.response));
    render(assets, res.data.data.length === 0 ? html`<p>${M.stories.noAssets}</p>` : html`<ul class="cards">${res.data.data.map((a) => assetMarkup(a, writer))}</ul>`);
    assets.querySelectorAll<HTMLButtonElement>('button[data-approve-asset]').forEach((b) => b.addEventListener('click', async () => {
      const id = b.dataset.approveAsset!;
      const approved = await state.api.POST('/api/workspace/proof/assets/{id}/approve', { params: { path: { id } } });
      if (!approved.data) return render(notice, failure(approved.error, approved.response));
      await drawAssets();
      render(notice, status(M.stories.assetApproved(id)));
    }));
  };

  target.querySelector<HTMLFormElement>('#story-filter')!.addEventListener('submit', (event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const chosen = String(form.get('status') ?? '');
    query.status = STATUSES.find((s) => s === chosen);
    query.productId = String(form.get('productId') ?? '').trim() || undefined;
    query.cursor = undefined;
    void drawItems();
  });

  target.querySelector<HTMLFormElement>('#raw-export')?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const out = target.querySelector('#raw-export-result')!;
    const productId = String(new FormData(event.target as HTMLFormElement).get('productId') ?? '').trim();
    const res = await state.api.POST('/api/workspace/proof/exports/raw', { body: { productId } });
    if (!res.data) return render(out, failure(res.error, res.response));
    const exported = res.data.data;
    if (downloadUrl) URL.revokeObjectURL(downloadUrl);
    downloadUrl = URL.createObjectURL(new Blob([JSON.stringify(exported)], { type: 'application/json' }));
    const originals = Array.isArray(exported.bundle.originals) ? exported.bundle.originals.length : 0;
    render(out, html`<div class="notice ok" role="status"><p>${M.stories.exported(originals)}</p>
<p><a href="${downloadUrl}" download="raw-originals-${productId}.json" data-field="raw-download">${M.stories.download(productId)}</a></p>
<p>${M.stories.digest}: <output data-field="digest">${exported.digest.value}</output></p></div>`);
    out.querySelector<HTMLAnchorElement>('a[data-field=raw-download]')!.focus();
  });

  await Promise.all([drawItems(), drawAssets()]);
}
