import { SafeHtml, html } from '../shared/html';
import { messages } from './messages';

/** What the wall reads of a render manifest (`service-proof-render-v1`, docs/proof.md). */
export interface WallManifest {
  schema: string;
  canonicalization: string;
  expiresAt: string;
  placement: { id: string; locale: string | null; renderConfig: Record<string, unknown> };
  items: WallItem[];
}

export interface WallItem {
  proofItemId: string;
  content: { title?: string; text?: string; rating?: number };
  attribution: Record<string, string>;
  disclosure: string | null;
  labels: string[];
  receiptId: string | null;
  media: Array<{ assetId: string; kind: string; url: string }>;
  eventToken: string;
}

/** The order attribution fields are written in; only those the manifest carries (the consented ones) appear. */
const ATTRIBUTION = ['name', 'title', 'company', 'location'];

/** A service path ("/api/…" or "embed/…"): absolute against `base` for the script on another site, root-relative in the HTML form. */
const resolve = (path: string, base: URL | null) => (base ? new URL(path.replace(/^\//, ''), base).href : `/${path.replace(/^\//, '')}`);

function media(item: WallItem, base: URL | null, who: string): SafeHtml[] {
  return item.media.map((m) => {
    const src = resolve(m.url, base);
    if (m.kind === 'video') {
      return html`<video class="sv-media" src="${src}" controls preload="none" playsinline data-play="${item.proofItemId}" aria-label="${messages.mediaVideo(who)}"></video>`;
    }
    if (m.kind === 'audio') {
      return html`<audio class="sv-media" src="${src}" controls preload="none" data-play="${item.proofItemId}" aria-label="${messages.mediaAudio(who)}"></audio>`;
    }
    return html`<img class="sv-media" src="${src}" loading="lazy" decoding="async" alt="${messages.mediaImage(who)}">`;
  });
}

function card(item: WallItem, base: URL | null): SafeHtml {
  const who = item.attribution.name ?? '';
  const rating = typeof item.content.rating === 'number' ? Math.max(0, Math.min(5, Math.round(item.content.rating))) : null;
  const attribution = ATTRIBUTION.flatMap((field) => (item.attribution[field] ? [html`<span class="sv-by-${field}">${item.attribution[field]}</span>`] : []));
  const labels = [...item.labels.filter((l) => l !== 'incentivized').map((l) => messages.labels[l] ?? l), ...(item.disclosure ? [item.disclosure] : [])];
  return html`<li class="sv-item" data-item="${item.proofItemId}"><figure class="sv-figure">
${rating === null ? '' : html`<p class="sv-rating" role="img" aria-label="${messages.rating(rating)}">${'★'.repeat(rating)}${'☆'.repeat(5 - rating)}</p>`}
<blockquote class="sv-quote">${item.content.title ? html`<p class="sv-title">${item.content.title}</p>` : ''}${item.content.text ? html`<p class="sv-text">${item.content.text}</p>` : ''}</blockquote>
${media(item, base, who)}
${attribution.length ? html`<figcaption class="sv-attribution">${attribution}</figcaption>` : ''}
</figure>
${labels.length ? html`<ul class="sv-labels">${labels.map((l) => html`<li class="sv-label">${l}</li>`)}</ul>` : ''}
${item.receiptId ? html`<a class="sv-verify" href="${resolve(`embed/verify/${encodeURIComponent(item.receiptId)}`, base)}" target="_blank" rel="noopener" data-click="${item.proofItemId}" aria-label="${messages.verifyFor(who)}">${messages.verify}</a>` : ''}
</li>`;
}

/**
 * The wall's markup, the same in the custom element's shadow root and in the HTML form: each item exactly
 * as the manifest allows (its text, the consented attribution, labels and disclosure, its media), and a
 * link to verify its receipt. `base` is the service's base URL for the script (links resolve against it);
 * null in the HTML form, served by the service itself (root-relative links: no Host header reaches them).
 */
export function wallMarkup(manifest: WallManifest, base: URL | null): SafeHtml {
  return html`<section class="sv-wall" aria-label="${messages.wallLabel}">${manifest.items.length
    ? html`<ul class="sv-items">${manifest.items.map((item) => card(item, base))}</ul>`
    : html`<p class="sv-empty">${messages.empty}</p>`}</section>`;
}
