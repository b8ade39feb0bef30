import { SafeHtml, html } from '../shared/html';
import { messages } from './messages';

/** What the pages read from `GET /api/public/roadmap/{productId}` (the PublicRoadmap schema). */
export interface Roadmap {
  product: { id: string; name: string };
  features: Array<{ id: string; title: string; problem: string; state: string; voteCount: number; releases: ReleaseRef[] }>;
  releases: Array<ReleaseRef & { features: Array<{ id: string; title: string; problem: string }> }>;
}
interface ReleaseRef { id: string; title: string; publishedAt: string }

/** Board columns in reading order; a feature still open takes votes and follows. */
const STATES = ['building', 'planned', 'discovery', 'released', 'declined'];
const OPEN = new Set(['building', 'planned', 'discovery']);

const day = (iso: string) => html`<time datetime="${iso}">${iso.slice(0, 10)}</time>`;
const base = (r: Roadmap) => `/roadmap/${encodeURIComponent(r.product.id)}`;

export function roadmapNav(r: Roadmap, current: 'roadmap' | 'changelog'): SafeHtml {
  const link = (href: string, text: string, here: boolean) => html`<a href="${href}"${here ? html` aria-current="page"` : ''}>${text}</a>`;
  return html`<nav class="rm-nav" aria-label="${messages.nav}">${link(base(r), messages.roadmapLink, current === 'roadmap')}
${link(`${base(r)}/changelog`, messages.changelogLink, current === 'changelog')}
<a href="${base(r)}/changelog.atom" type="application/atom+xml">${messages.feedLink}</a></nav>`;
}

function feature(r: Roadmap, f: Roadmap['features'][number], linked: string | undefined): SafeHtml {
  return html`<li class="rm-feature" id="feature-${f.id}" data-feature="${f.id}"${f.id === linked ? html` aria-current="true"` : ''}><h3>${f.title}</h3>${f.problem ? html`<p>${f.problem}</p>` : ''}
<p class="rm-votes"><span class="rm-count" data-count="${f.id}" aria-live="polite">${messages.votes(f.voteCount)}</span></p>
${f.releases.map((rel) => html`<p class="rm-shipped">${messages.shippedIn} <a href="${base(r)}/changelog#${rel.id}">${rel.title}</a> ${messages.on} ${day(rel.publishedAt)}</p>`)}
${OPEN.has(f.state) ? html`<div class="rm-actions" hidden>
<button type="button" class="rm-button" data-action="vote" data-feature="${f.id}" aria-pressed="false">${messages.vote}<span class="rm-hidden"> ${messages.forFeature(f.title)}</span></button>
<button type="button" class="rm-button" data-action="follow" data-feature="${f.id}" aria-pressed="false">${messages.follow}<span class="rm-hidden"> ${f.title}</span></button>
</div>` : ''}</li>`;
}

/**
 * The board: public features grouped by state, counts only; the vote and follow buttons wait for the script.
 * `linked` is the feature a link named (`?feature=`): marked, and scrolled to by the script.
 */
export function roadmapPage(r: Roadmap, linked?: string): SafeHtml {
  const groups = STATES.map((state) => ({ state, features: r.features.filter((f) => f.state === state) })).filter((g) => g.features.length);
  return html`<header class="rm-header"><h1>${messages.title(r.product.name)}</h1>${roadmapNav(r, 'roadmap')}<p>${messages.intro}</p>
<p class="rm-status" id="rm-status" role="status"></p></header>
${groups.length ? groups.map((g) => html`<section class="rm-group" aria-labelledby="state-${g.state}"><h2 id="state-${g.state}">${messages.states[g.state]}</h2>
<ul class="rm-features">${g.features.map((f) => feature(r, f, linked))}</ul></section>`) : html`<p>${messages.emptyBoard}</p>`}`;
}

/** Releases newest first, each with the public features it shipped. */
export function changelogPage(r: Roadmap): SafeHtml {
  return html`<header class="rm-header"><h1>${messages.changelogTitle(r.product.name)}</h1>${roadmapNav(r, 'changelog')}</header>
${r.releases.length ? r.releases.map((rel) => html`<article class="rm-release" id="${rel.id}"><h2>${rel.title}</h2><p>${day(rel.publishedAt)}</p>
<ul>${rel.features.map((f) => html`<li><strong>${f.title}</strong>${f.problem ? html`: ${f.problem}` : ''}</li>`)}</ul></article>`)
    : html`<p>${messages.emptyChangelog}</p>`}`;
}
