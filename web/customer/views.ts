import { SafeHtml, html } from '../shared/html';
import { M } from './messages';

/**
 * The customer pages' markup, built by the server (the first render, and every page without JavaScript)
 * and by the browser script (after it reads a link's code) from the same functions. Forms are real
 * forms: without JavaScript they post to the server; the script takes the same forms over.
 */

export interface FlowQuestion {
  questionId: string; required: boolean; text: string; kind: 'short_text' | 'long_text' | 'choice' | 'yes_no'; helpText: string | null;
  options: string[] | null;
}

/** The live version's public view (`GET /api/proof/collect/flows/{publicId}`, a draft's `flow`). */
export interface FlowView {
  id: string; flowVersionId: string; title: string; intro: string; thankYou: string; questions: FlowQuestion[];
  rating: { scale: 'nps' | 'five_star'; required: boolean } | null; mediaKinds: string[]; identityFields: string[]; maxVideoSeconds: number;
  consentTemplateVersionId: string | null; wording: string | null; wordingHash: string | null;
  terms: { displayModes: string[]; identityFields: string[]; channels: string[] } | null;
  /** Same-origin, so the pages' CSP (`media-src 'self'`) plays it; no script is needed to show it. */
  welcomeVideo: { id: string; url: string } | null;
}

/** What the form holds: the names are the no-JS form's fields (COLLECTION.md §3.4). */
export interface StoryValues {
  text?: string; title?: string; rating?: number; answers?: Record<string, string | boolean>;
  name?: string; email?: string; company?: string; jobTitle?: string; location?: string;
  displayMode?: string; identityFields?: string[]; channels?: string[]; consent?: boolean;
}

export interface StoryFormOptions {
  /** Where the form posts without JavaScript. */
  action: string;
  hidden: Record<string, string>;
  values?: StoryValues;
  /** A sentence at the top (a refusal), and sentences next to fields (by field name). */
  error?: string;
  fieldErrors?: Record<string, string>;
  /** A personal request: the visible opt-out. */
  optOut?: Link;
}

const DISPLAY_ORDER = ['full_name', 'first_name', 'initials', 'anonymous'];

/** The identity choices the form offers: the template's terms, narrowed by the flow's own list when it has one. */
export function identityChoices(flow: FlowView): string[] {
  const allowed = flow.terms?.identityFields ?? flow.identityFields;
  return flow.identityFields.length ? allowed.filter((f) => flow.identityFields.includes(f)) : allowed;
}

/** How the name appears in each display mode (what the wall shows). */
export function shownName(name: string | undefined, mode: string | undefined): string {
  const words = (name ?? '').trim().split(/\s+/).filter(Boolean);
  if (mode === 'anonymous' || words.length === 0) return M.anonymous;
  if (mode === 'first_name') return words[0];
  if (mode === 'initials') return words.map((w) => `${w.charAt(0).toUpperCase()}.`).join(' ');
  return words.join(' ');
}

/** Exactly what the consent will allow to be shown, and where: the preview beside the consent box. */
export function attribution(v: StoryValues): { shownAs: string; channels: string[] } {
  const fields = v.identityFields ?? [];
  const parts = [fields.includes('name') ? shownName(v.name, v.displayMode) : M.anonymous];
  if (fields.includes('title') && v.jobTitle) parts.push(v.jobTitle);
  if (fields.includes('company') && v.company) parts.push(v.company);
  if (fields.includes('location') && v.location) parts.push(v.location);
  return { shownAs: parts.join(', '), channels: (v.channels ?? []).map((c) => M.channels[c] ?? c) };
}

export function previewView(v: StoryValues): SafeHtml {
  const a = attribution(v);
  return html`<dl class="preview"><dt>${M.previewAs}</dt><dd data-preview="as">${a.shownAs}</dd>
<dt>${M.previewOn}</dt><dd data-preview="on">${a.channels.length ? a.channels.join(', ') : M.previewNowhere}</dd></dl>`;
}

const fieldError = (errors: Record<string, string> | undefined, name: string, id: string) =>
  html`<p class="field-error" id="err-${id}" data-error-for="${name}"${errors?.[name] ? '' : html` hidden`}>${errors?.[name] ?? ''}</p>`;

function input(name: string, id: string, label: string, value: string | undefined,
  opts: { type?: string; autocomplete?: string; errors?: Record<string, string>; max?: number } = {}) {
  return html`<div class="field"><label for="${id}">${label}</label>
<input id="${id}" name="${name}" type="${opts.type ?? 'text'}" value="${value ?? ''}"${opts.autocomplete ? html` autocomplete="${opts.autocomplete}"` : ''}${opts.max ? html` maxlength="${opts.max}"` : ''} aria-describedby="err-${id}">
${fieldError(opts.errors, name, id)}</div>`;
}

function questionField(q: FlowQuestion, n: number, value: string | boolean | undefined, errors?: Record<string, string>): SafeHtml {
  const id = `q-${n}`;
  const name = `q.${q.questionId}`;
  const req = q.required ? html` <span class="req">${M.required}</span>` : '';
  const help = q.helpText ? html`<p class="help" id="help-${id}">${q.helpText}</p>` : '';
  const described = `${q.helpText ? `help-${id} ` : ''}err-${id}`;
  if (q.kind === 'choice' || q.kind === 'yes_no') {
    const options = q.kind === 'yes_no' ? [['yes', M.yes], ['no', M.no]] : (q.options ?? []).map((o) => [o, o]);
    const current = typeof value === 'boolean' ? (value ? 'yes' : 'no') : value;
    return html`<fieldset class="field" aria-describedby="${described}"><legend>${q.text}${req}</legend>${help}
${options.map(([v, label], i) => html`<label class="choice"><input type="radio" name="${name}" id="${id}-${i}" value="${v}"${current === v ? ' checked' : ''}${q.required ? ' required' : ''}> ${label}</label>`)}
${fieldError(errors, name, id)}</fieldset>`;
  }
  const text = typeof value === 'string' ? value : '';
  const control = q.kind === 'short_text'
    ? html`<input id="${id}" name="${name}" type="text" maxlength="280" value="${text}"${q.required ? ' required' : ''} aria-describedby="${described}">`
    : html`<textarea id="${id}" name="${name}" rows="4" maxlength="10000"${q.required ? ' required' : ''} aria-describedby="${described}">${text}</textarea>`;
  return html`<div class="field"><label for="${id}">${q.text}${req}</label>${help}${control}${fieldError(errors, name, id)}</div>`;
}

function mediaSection(flow: FlowView): SafeHtml {
  const kinds = flow.mediaKinds.filter((k) => k !== 'text');
  if (kinds.length === 0) return html``;
  const accept = kinds.map((k) => `${k}/*`).join(',');
  return html`<section id="media" class="media" aria-labelledby="media-h" hidden><h2 id="media-h">${M.mediaHeading}</h2>
<p class="help">${M.mediaHelp(flow.maxVideoSeconds)}</p>
<div class="media-buttons">
${kinds.includes('video') ? html`<button type="button" data-record="camera">${M.recordVideo}</button>` : ''}
${kinds.includes('audio') ? html`<button type="button" data-record="microphone">${M.recordAudio}</button>` : ''}
${kinds.includes('video') ? html`<button type="button" data-record="screen">${M.recordScreen}</button>` : ''}
<label class="file-button" for="media-file">${M.chooseFile}</label><input id="media-file" class="visually-hidden" type="file" accept="${accept}">
</div>
${kinds.includes('video') ? html`<label class="choice"><input type="checkbox" id="screen-consent"> ${M.screenConsent}</label>` : ''}
<div id="media-stage" class="media-stage"></div>
<p id="media-status" class="status" role="status"></p>
<progress id="media-progress" max="100" value="0" aria-label="${M.uploadProgress}" hidden></progress>
</section>`;
}

/** The story form of a flow's pinned version (PAGES.md §3). */
export function storyForm(flow: FlowView, opts: StoryFormOptions): SafeHtml {
  const v = opts.values ?? {};
  const errs = opts.fieldErrors;
  const terms = flow.terms;
  const modes = DISPLAY_ORDER.filter((m) => terms?.displayModes.includes(m));
  const mode = v.displayMode ?? modes[0];
  const idFields = identityChoices(flow);
  const chosenFields = v.identityFields ?? idFields.filter((f) => f === 'name' || f === 'company');
  const channels = terms?.channels ?? [];
  const chosenChannels = v.channels ?? channels;
  const scale = flow.rating?.scale;
  const ratings = scale === 'nps' ? Array.from({ length: 11 }, (_, i) => i) : [1, 2, 3, 4, 5];
  const values: StoryValues = { ...v, displayMode: mode, identityFields: chosenFields, channels: chosenChannels };
  const welcome = flow.welcomeVideo
    ? html`<video class="welcome-video" controls preload="none" src="${flow.welcomeVideo.url}" aria-label="${M.welcomeVideo}"><a href="${flow.welcomeVideo.url}">${M.welcomeVideoFallback}</a></video>`
    : '';
  return html`<header><h1>${flow.title || M.siteName}</h1>${flow.intro ? html`<p class="intro">${flow.intro}</p>` : ''}${welcome}</header>
<form id="story" class="story" method="post" action="${opts.action}" data-flow="${flow.id}">
<p id="form-error" class="form-error" role="alert"${opts.error ? '' : ' hidden'}>${opts.error ?? ''}</p>
${Object.entries(opts.hidden).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
${flow.rating && scale ? html`<fieldset class="field rating" aria-describedby="err-rating"><legend>${M.ratingLegend(scale)}${flow.rating.required ? html` <span class="req">${M.required}</span>` : ''}</legend>
<div class="rating-scale">${ratings.map((n) => html`<label class="rate"><input type="radio" name="rating" value="${n}"${v.rating === n ? ' checked' : ''}${flow.rating!.required ? ' required' : ''}><span>${M.ratingValue(n, scale)}</span></label>`)}</div>
${fieldError(errs, 'rating', 'rating')}</fieldset>` : ''}
<section aria-labelledby="story-h"><h2 id="story-h">${M.storyHeading}</h2>
<div class="field"><label for="f-text">${M.storyLabel} <span class="req">${M.required}</span></label>
<p class="help" id="help-text">${M.storyHelp}</p>
<textarea id="f-text" name="text" rows="6" minlength="3" maxlength="10000" required aria-describedby="help-text err-f-text">${v.text ?? ''}</textarea>
${fieldError(errs, 'text', 'f-text')}</div>
${input('title', 'f-title', M.titleLabel, v.title, { errors: errs, max: 180 })}
</section>
${flow.questions.length ? html`<section aria-labelledby="q-h"><h2 id="q-h">${M.questionsHeading}</h2>
${flow.questions.map((q, i) => questionField(q, i + 1, v.answers?.[q.questionId], errs))}</section>` : ''}
${mediaSection(flow)}
<section aria-labelledby="about-h"><h2 id="about-h">${M.aboutHeading}</h2>
${input('name', 'f-name', M.nameLabel, v.name, { autocomplete: 'name', errors: errs, max: 120 })}
${input('email', 'f-email', M.emailLabel, v.email, { type: 'email', autocomplete: 'email', errors: errs, max: 320 })}
${input('company', 'f-company', M.companyLabel, v.company, { autocomplete: 'organization', errors: errs, max: 120 })}
${input('jobTitle', 'f-jobtitle', M.jobTitleLabel, v.jobTitle, { autocomplete: 'organization-title', errors: errs, max: 120 })}
${input('location', 'f-location', M.locationLabel, v.location, { errors: errs, max: 120 })}
</section>
<section aria-labelledby="shown-h"><h2 id="shown-h">${M.shownHeading}</h2>
${modes.length ? html`<fieldset class="field"><legend>${M.displayModeLegend}</legend>
${modes.map((m) => html`<label class="choice"><input type="radio" name="displayMode" value="${m}"${m === mode ? ' checked' : ''}> ${M.displayModes[m] ?? m}</label>`)}</fieldset>` : ''}
${idFields.length ? html`<fieldset class="field"><legend>${M.identityLegend}</legend>
${idFields.map((f) => html`<label class="choice"><input type="checkbox" name="identityFields" value="${f}"${chosenFields.includes(f) ? ' checked' : ''}> ${M.identityFields[f] ?? f}</label>`)}</fieldset>` : ''}
${channels.length ? html`<fieldset class="field" aria-describedby="err-channels"><legend>${M.channelsLegend}</legend>
${channels.map((c) => html`<label class="choice"><input type="checkbox" name="channels" value="${c}"${chosenChannels.includes(c) ? ' checked' : ''}> ${M.channels[c] ?? c}</label>`)}
${fieldError(errs, 'channels', 'channels')}</fieldset>` : ''}
<h3>${M.previewHeading}</h3>
<div id="preview" aria-live="polite">${previewView(values)}</div>
</section>
<section aria-labelledby="consent-h"><h2 id="consent-h">${M.consentHeading}</h2>
${flow.wording ? html`<blockquote class="wording" data-wording-hash="${flow.wordingHash ?? ''}">${flow.wording}</blockquote>
<p class="help">${M.consentVersion(flow.consentTemplateVersionId ?? '', flow.wordingHash ?? '')}</p>
<label class="choice consent"><input type="checkbox" id="f-consent" name="consent" value="yes" required aria-describedby="err-consent"${v.consent ? ' checked' : ''}> ${M.consentLabel}</label>
${fieldError(errs, 'consent', 'consent')}` : html`<p>${M.noConsent}</p>`}
</section>
<div class="hp"><label for="f-website">${M.honeypot}</label><input id="f-website" name="website" type="text" tabindex="-1" autocomplete="off"></div>
<p id="save-status" class="status" role="status"></p>
<button type="submit" class="primary">${M.send}</button>
</form>
${opts.optOut ? optOutBlock(opts.optOut) : ''}`;
}

/** One click stops every request (PAGES.md §3): posted by the script, or without JavaScript with the code in the body. */
export function optOutForm(link: Link): SafeHtml {
  return html`<p>${M.optOutExplain}</p><form method="post" action="${link.base}/opt-out" id="opt-out-form" data-api="opt-out">${carry(link, {})}
<button type="submit">${M.optOutButton}</button></form>`;
}

/** The visible opt-out of a request link, below its story form. */
export function optOutBlock(link: Link): SafeHtml {
  return html`<section class="opt-out" aria-labelledby="optout-h"><h2 id="optout-h">${M.optOutHeading}</h2>${optOutForm(link)}</section>`;
}

export function optOutDone(): SafeHtml {
  return html`<h1>${M.optOutDoneHeading}</h1><p role="status" data-state="opted-out">${M.optOutDone}</p>`;
}

/** After submitting: the control link once, copy, "save this link", the signed receipt. */
export function thanksView(flow: Pick<FlowView, 'thankYou'>, controlUrl: string, withScript: boolean): SafeHtml {
  return html`<h1 tabindex="-1" id="thanks-h">${M.thanksHeading}</h1>${flow.thankYou ? html`<p>${flow.thankYou}</p>` : ''}
<section class="control-link" aria-labelledby="cl-h"><h2 id="cl-h">${M.controlHeading}</h2><p>${M.controlOnce}</p>
<p class="link"><a data-field="controlUrl" href="${controlUrl}">${controlUrl}</a></p>
${withScript ? html`<p><button type="button" id="copy-link">${M.copy}</button> <span id="copy-status" role="status"></span></p>
<p><button type="button" id="download-receipt">${M.receiptDownload}</button></p>` : ''}</section>`;
}

/** A page whose code is in the fragment: the script replaces this; without it, a POST form to paste the code. */
export function fragmentShell(heading: string, action: string, prefix: string): SafeHtml {
  return html`<h1>${heading}</h1><div id="app" aria-live="polite"><noscript><p>${M.needsJs}</p></noscript>
<form method="post" action="${action}" class="paste" id="paste-form"><p>${M.pasteCode}</p>
<div class="field"><label for="code">${M.codeLabel}</label><input id="code" name="code" type="text" autocomplete="off" spellcheck="false" placeholder="${prefix}…" required></div>
<button type="submit">${M.open}</button></form></div>`;
}

export function errorView(message: string): SafeHtml {
  return html`<p class="form-error" role="alert">${message}</p>`;
}

interface Content { title?: string; text?: string; [k: string]: unknown }

/** The words of a version or asset: its title and text, or every statement of an asset's sections. */
export function wordsOf(content: unknown): string[] {
  const c = (content ?? {}) as Content;
  if (typeof c.text === 'string' || typeof c.title === 'string') return [c.title, c.text].filter((w): w is string => typeof w === 'string' && w !== '');
  const out: string[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) {
        if ((k === 'text' || k === 'quote' || k === 'headline') && typeof v === 'string') out.push(v);
        else if (k !== 'customerApprovals') walk(v);
      }
    }
  };
  walk(content);
  return out;
}

const words = (content: unknown) => html`<blockquote class="wording">${wordsOf(content).map((w) => html`<p>${w}</p>`)}</blockquote>`;

export interface Story {
  proofItemId: string; type: string; status: string; paused: boolean; revokedAt: string | null;
  currentVersion: { id: string; content: unknown; contentHash: string } | null;
  pendingApprovals: Array<{ versionId: string; content: unknown; contentHash: string }>;
  corrections: Array<{ id: string; status: string; message: string; note: string | null }>;
}

export interface Passport { uses: Array<{ placementId: string; name: string; channel: string; rendersNow: boolean; reasons: string[] }> }

/** Where a page's forms post (`/collect`, or '' at a custom domain's root) and, without JavaScript, the link's code. */
export interface Link { base: string; code: string | null }

/** The hidden fields every action form carries: without JavaScript, the link's code rides in the POST body. */
const carry = (link: Link, fields: Record<string, string>) => html`${link.code ? html`<input type="hidden" name="code" value="${link.code}">` : ''}${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}`;

function storyCard(s: Story, passport: Passport | null, link: Link, n: number): SafeHtml {
  const act = (action: string, extra: Record<string, string> = {}) => carry(link, { action, proofItemId: s.proofItemId, ...extra });
  const form = (inner: SafeHtml, cls = '') => html`<form method="post" action="${link.base}/control/act" class="action ${cls}" data-api="control">${inner}</form>`;
  const revoked = s.status === 'revoked' || s.revokedAt !== null;
  return html`<article class="story-card" data-story="${s.proofItemId}" aria-labelledby="story-${n}-h">
<h2 id="story-${n}-h">${wordsOf(s.currentVersion?.content)[0] ?? s.proofItemId}</h2>
<p class="help" data-status="${s.status}">${M.storyStatus(s.status, s.paused)}</p>
${s.currentVersion ? html`<h3>${M.currentWording}</h3>${words(s.currentVersion.content)}<p class="hash">${M.contentHash(s.currentVersion.contentHash)}</p>` : ''}
${revoked ? html`<p class="notice" data-state="withdrawn">${M.withdrawn}</p>` : html`
<h3>${M.whereShown}</h3>
${passport && passport.uses.length ? html`<ul class="uses">${passport.uses.map((u) => html`<li data-placement="${u.placementId}" data-renders-now="${String(u.rendersNow)}">${u.name} (${M.channels[u.channel] ?? u.channel}): <strong>${u.rendersNow ? M.rendersNow : M.notShown(u.reasons)}</strong></li>`)}</ul>` : html`<p>${M.notUsed}</p>`}
${s.pendingApprovals.length ? html`<h3>${M.pendingHeading}</h3>${s.pendingApprovals.map((p) => html`<div class="pending" data-version="${p.versionId}">${words(p.content)}
<p class="hash">${M.contentHash(p.contentHash)}</p>
${form(html`${act('approve_wording', { versionId: p.versionId, contentHash: p.contentHash })}<button type="submit" class="primary">${M.approve}</button>`)}
${form(html`${act('decline_wording', { versionId: p.versionId })}<div class="field"><label for="reason-${p.versionId}">${M.declineReason}</label><input id="reason-${p.versionId}" name="reason" maxlength="2000"></div><button type="submit">${M.decline}</button>`)}
</div>`)}` : ''}
<div class="row">${s.paused ? form(html`${act('resume')}<button type="submit">${M.resume}</button>`) : form(html`${act('pause')}<button type="submit">${M.pause}</button>`)}</div>
<details><summary>${M.correctionHeading}</summary>${form(html`${act('request_correction')}<div class="field"><label for="corr-${n}">${M.correctionLabel}</label><textarea id="corr-${n}" name="message" rows="3" minlength="3" maxlength="2000" required></textarea></div><button type="submit">${M.correctionSend}</button>`)}</details>
${s.corrections.length ? html`<h3>${M.corrections}</h3><ul>${s.corrections.map((c) => html`<li>${c.message} (${c.status}${c.note ? `: ${c.note}` : ''})</li>`)}</ul>` : ''}
<details class="danger"><summary>${M.withdrawHeading}</summary><p>${M.withdrawFinal}</p>
${form(html`${act('withdraw')}<label class="choice"><input type="checkbox" name="confirm" value="true" required id="confirm-${n}"> ${M.withdrawConfirm}</label><button type="submit" class="danger">${M.withdraw}</button>`)}</details>`}
<div class="row downloads">
<form method="post" action="${link.base}/control/download" data-download="passport">${carry(link, { proofItemId: s.proofItemId, what: 'passport' })}<button type="submit">${M.passportDownload}</button></form>
<form method="post" action="${link.base}/control/download" data-download="receipt">${carry(link, { proofItemId: s.proofItemId, what: 'receipt' })}<button type="submit">${M.receiptDownload}</button></form>
</div></article>`;
}

/** The control page (PAGES.md §4): every story the link reaches, and the person-link request. */
export function controlView(stories: Story[], passports: Record<string, Passport | null>, link: Link, notice?: string, error?: string): SafeHtml {
  return html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${error ? errorView(error) : ''}
${stories.length ? stories.map((s, i) => storyCard(s, passports[s.proofItemId] ?? null, link, i + 1)) : html`<p>${M.noStories}</p>`}
<section aria-labelledby="pl-h" class="person-link"><h2 id="pl-h">${M.personLinkHeading}</h2>
<form method="post" action="${link.base}/control/person-link" class="action" data-api="person-link">${carry(link, {})}
<div class="field"><label for="pl-email">${M.personLinkLabel}</label><input id="pl-email" name="email" type="email" autocomplete="email" required maxlength="320"></div>
<button type="submit">${M.personLinkSend}</button></form></section>`;
}

export interface ReviewItem { kind: 'version' | 'asset'; id: string; content: unknown; contentHash: string }

/** Words quoting the customer that await their decision (`/api/proof/review`). */
export function reviewView(items: ReviewItem[], link: Link, notice?: string, error?: string): SafeHtml {
  const form = (item: ReviewItem, decision: 'approve' | 'decline', label: string, cls: string) =>
    html`<form method="post" action="${link.base}/review/act" class="action" data-api="review">${carry(link, { kind: item.kind, id: item.id, decision, contentHash: item.contentHash })}<button type="submit" class="${cls}">${label}</button></form>`;
  return html`${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}${error ? errorView(error) : ''}
${items.length ? items.map((item) => html`<article class="story-card" data-review="${item.id}">${words(item.content)}<p class="hash">${M.contentHash(item.contentHash)}</p>
<div class="row">${form(item, 'approve', M.approve, 'primary')}${form(item, 'decline', M.decline, '')}</div></article>`) : html`<p data-state="empty">${M.reviewNone}</p>`}`;
}

export interface Interview { state: 'open' | 'finished'; questions: Array<{ id: string; text: string;
  answer: { text: string | null; mediaId: string | null } | null; }>; }

/** An interview: each question answered by text (or, with the script, a recording), then finish. */
export function interviewView(iv: Interview, link: Link, error?: string): SafeHtml {
  if (iv.state === 'finished') return html`<p class="notice" role="status" data-state="finished">${M.finished}</p>`;
  return html`${error ? errorView(error) : ''}${iv.questions.map((q, i) => html`<article class="story-card" data-question="${q.id}">
<form method="post" action="${link.base}/interview/act" class="action" data-api="interview">${carry(link, { questionId: q.id })}
<div class="field"><label for="ans-${q.id}">${q.text}</label><textarea id="ans-${q.id}" name="text" rows="4" maxlength="10000" required aria-label="${M.answerLabel(i + 1)}">${q.answer?.text ?? ''}</textarea></div>
${q.answer ? html`<p class="help">${M.answered}</p>` : ''}<button type="submit">${M.saveAnswer}</button></form>
<div class="interview-media" data-media-for="${q.id}" hidden><button type="button" data-record-answer="${q.id}">${M.recordAnswer}</button><div class="media-stage"></div><p class="status" role="status"></p></div>
</article>`)}
<form method="post" action="${link.base}/interview/act" class="action" data-api="interview">${carry(link, { action: 'finish' })}<button type="submit" class="primary">${M.finish}</button></form>`;
}
