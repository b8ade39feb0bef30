import { SafeHtml } from '../shared/html';
import { Answer, Offline, call, download, sleep } from './api';
import { M, refusal } from './messages';
import { DraftRef, MediaPanel, recordInterviewAnswer } from './recorder';
import { fieldOfMessage, patchOf, valuesFromEntries, valuesOfDraft } from './story';
import {
  FlowView, Interview, Passport, ReviewItem, Story, controlView, errorView, interviewView, optOutDone, optOutForm, previewView, reviewView, storyForm,
  thanksView,
} from './views';

/**
 * The customer pages' one script: it enhances the server-rendered story form (draft, autosave, media,
 * submit) and runs the pages whose code is in the URL fragment (read here, sent in the header the API
 * names, and removed from the address bar at once).
 */

interface PageData { page: string; base: string; flow?: FlowView }
const data = JSON.parse(document.getElementById('page-data')?.textContent ?? '{}') as PageData;
const main = document.getElementById('main')!;

function render(target: HTMLElement, markup: SafeHtml) {
  target.innerHTML = markup.text;
}

/** The link's code: from the fragment (then removed from the address bar), else this tab's copy after a reload. */
function takeCode(prefix: string): string | null {
  const key = `code:${data.page}`;
  const raw = location.hash.slice(1);
  // Out of the address bar first: a fragment that does not decode must not stay there either.
  if (location.hash) history.replaceState(history.state, '', location.pathname);
  let fragment = '';
  try {
    fragment = decodeURIComponent(raw);
  } catch {
    fragment = raw;
  }
  if (fragment.startsWith(prefix)) {
    sessionStorage.setItem(key, fragment);
    return fragment;
  }
  return sessionStorage.getItem(key);
}

const focusFirst = (root: HTMLElement, selector: string) => root.querySelector<HTMLElement>(selector)?.focus();

/** The story form, enhanced: a draft opens when the person starts answering; every change autosaves. */
class StoryPage {
  private draft: (DraftRef & { revision: number }) | null;
  private opening: Promise<DraftRef> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private saving: Promise<void> = Promise.resolve();
  private dirty = false;
  private media: MediaPanel | null = null;
  private form!: HTMLFormElement;

  constructor(
    private readonly flow: FlowView,
    private readonly storageKey: string,
    draft: (DraftRef & { revision: number }) | null,
    private readonly headers: Record<string, string> = {},
  ) {
    this.draft = draft;
  }

  mount(form: HTMLFormElement) {
    this.form = form;
    form.addEventListener('input', () => this.changed());
    form.addEventListener('change', () => this.changed());
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      void this.submit();
    });
    const section = form.querySelector<HTMLElement>('#media');
    if (section) {
      this.media = new MediaPanel(section, {
        maxSeconds: this.flow.maxVideoSeconds, consentVersionId: this.flow.consentTemplateVersionId, storageKey: this.storageKey,
        draft: () => this.ensureDraft(),
      });
      if (this.draft) void this.media.resume(this.draft);
    }
  }

  private values() {
    return valuesFromEntries([...new FormData(this.form)].map(([k, v]) => [k, String(v)] as [string, string]), this.flow);
  }

  private changed() {
    render(this.form.querySelector<HTMLElement>('#preview')!, previewView(this.values()));
    this.dirty = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.save(), 700);
  }

  private status(text: string) {
    this.form.querySelector('#save-status')!.textContent = text;
  }

  ensureDraft(): Promise<DraftRef> {
    if (this.draft) return Promise.resolve(this.draft);
    this.opening ??= (async () => {
      for (let wait = 500; ; wait = Math.min(wait * 2, 8000)) {
        try {
          const opened = await call('POST', '/api/proof/collect/drafts', this.headers, { flowId: this.flow.id });
          if (opened.status !== 201 && opened.status !== 200) throw new Error(refusal(opened.code, opened.error));
          this.draft = { id: opened.data.draft.id, session: opened.data.draftSession, revision: opened.data.draft.revision };
          sessionStorage.setItem(this.storageKey, JSON.stringify(this.draft));
          return this.draft;
        } catch (err) {
          if (!(err instanceof Offline)) {
            this.opening = null;
            this.topError((err as Error).message);
            throw err;
          }
          this.status(M.saveFailed);
          await sleep(wait);
        }
      }
    })();
    return this.opening;
  }

  /** One save at a time; a stale revision is resolved by re-reading it and saving what the person typed on top. */
  save(): Promise<void> {
    this.saving = this.saving.then(async () => {
      if (!this.dirty) return;
      this.dirty = false;
      try {
        const draft = await this.ensureDraft();
        this.status(M.saving);
        const patch = patchOf(this.values(), this.flow);
        let res = await call('PATCH', `/api/proof/collect/drafts/${draft.id}`, { 'x-draft-session': draft.session },
          { ...patch, revision: this.draft!.revision });
        if (res.status === 409 && /revision/i.test(res.error ?? '')) {
          const current = await call('GET', `/api/proof/collect/drafts/${draft.id}`, { 'x-draft-session': draft.session });
          if (current.status === 200) this.draft!.revision = current.data.draft.revision;
          res = await call('PATCH', `/api/proof/collect/drafts/${draft.id}`, { 'x-draft-session': draft.session },
            { ...patch, revision: this.draft!.revision });
          if (res.status === 200) {
            this.draft!.revision = res.data.draft.revision;
            this.status(M.staleResolved);
            return;
          }
        }
        if (res.status === 200) {
          this.draft!.revision = res.data.draft.revision;
          sessionStorage.setItem(this.storageKey, JSON.stringify(this.draft));
          this.clearErrors();
          this.status(M.saved);
        } else this.showRefusal(res);
      } catch (err) {
        if (err instanceof Offline) {
          this.dirty = true;
          this.status(M.saveFailed);
          setTimeout(() => void this.save(), 3000);
        }
      }
    });
    return this.saving;
  }

  private clearErrors() {
    for (const p of this.form.querySelectorAll<HTMLElement>('[data-error-for]')) {
      p.hidden = true;
      p.textContent = '';
    }
    const top = this.form.querySelector<HTMLElement>('#form-error')!;
    top.hidden = true;
    top.textContent = '';
    for (const el of this.form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
  }

  private topError(message: string) {
    const top = this.form.querySelector<HTMLElement>('#form-error')!;
    top.textContent = message;
    top.hidden = false;
    top.scrollIntoView({ block: 'center' });
  }

  /** A refusal next to the field it is about (and focus there), else at the top; every value stays in the form. */
  private showRefusal(res: Answer) {
    const message = refusal(res.code, res.error);
    const name = fieldOfMessage(res.error ?? '', this.flow);
    const slot = name ? this.form.querySelector<HTMLElement>(`[data-error-for="${CSS.escape(name)}"]`) : null;
    if (!slot) return this.topError(message);
    slot.textContent = message;
    slot.hidden = false;
    const control = this.form.querySelector<HTMLElement>(`[name="${CSS.escape(name!)}"]`);
    control?.setAttribute('aria-invalid', 'true');
    control?.focus();
  }

  private async submit() {
    const button = this.form.querySelector<HTMLButtonElement>('button[type="submit"]')!;
    if (this.media?.sending) return this.topError(M.waitForUpload);
    button.disabled = true;
    button.textContent = M.sending;
    try {
      this.dirty = true;
      clearTimeout(this.timer);
      await this.save();
      const draft = await this.ensureDraft();
      if (!this.form.querySelector('[data-error-for]:not([hidden])')) {
        const res = await call('POST', `/api/proof/collect/drafts/${draft.id}/submit`, { 'x-draft-session': draft.session }, {});
        if (res.status === 201) return this.thanks(res.data.controlUrl, res.data.controlToken, res.data.proofItemId);
        this.clearErrors();
        this.showRefusal(res);
      }
    } catch (err) {
      this.topError(err instanceof Offline ? M.offline : (err as Error).message);
    }
    button.disabled = false;
    button.textContent = M.send;
  }

  private thanks(controlUrl: string, controlToken: string, proofItemId: string) {
    sessionStorage.removeItem(this.storageKey);
    this.media?.stop();
    render(main, thanksView(this.flow, controlUrl, true));
    focusFirst(main, '#thanks-h');
    main.querySelector('#copy-link')!.addEventListener('click', async () => {
      const status = main.querySelector('#copy-status')!;
      try {
        await navigator.clipboard.writeText(controlUrl);
        status.textContent = M.copied;
      } catch {
        getSelection()?.selectAllChildren(main.querySelector('[data-field="controlUrl"]')!);
      }
    });
    main.querySelector('#download-receipt')!.addEventListener('click', async () => {
      const res = await fetch(`/api/proof/collect/control/receipt?proofItemId=${encodeURIComponent(proofItemId)}`,
        { headers: { 'x-control-token': controlToken }, credentials: 'omit' });
      if (res.ok) download(await res.blob(), `receipt-${proofItemId}.json`);
    });
  }
}

/** The story form of a draft already opened (request, continuation, or resumed after a reload). */
function showDraftForm(flow: FlowView, draftData: Record<string, any>, session: string, storageKey: string, withOptOut: string | null) {
  render(main, storyForm(flow, { action: '', hidden: {}, values: valuesOfDraft(draftData), optOut: withOptOut ? { base: data.base, code: null } : undefined }));
  const story = new StoryPage(flow, storageKey, { id: draftData.id, session, revision: draftData.revision });
  story.mount(main.querySelector<HTMLFormElement>('#story')!);
  if (withOptOut) bindOptOut(withOptOut);
}

function bindOptOut(code: string) {
  main.querySelector('#opt-out-form')?.addEventListener('submit', async (e) => {
    e.preventDefault();
    const res = await call('POST', '/api/proof/collect/opt-out', { 'x-link-token': code }, {});
    if (res.status === 200) {
      render(main, optOutDone());
      sessionStorage.removeItem(`code:${data.page}`);
    } else render(main.querySelector<HTMLElement>('#opt-out-form')!, errorView(refusal(res.code, res.error)));
  });
}

async function flowPage() {
  const flow = data.flow!;
  const storageKey = `draft:${flow.id}`;
  const saved = sessionStorage.getItem(storageKey);
  if (saved) {
    const ref = JSON.parse(saved) as DraftRef;
    const current = await call('GET', `/api/proof/collect/drafts/${ref.id}`, { 'x-draft-session': ref.session }).catch(() => null);
    if (current?.status === 200 && current.data.draft.status === 'open') {
      return showDraftForm(current.data.flow, current.data.draft, ref.session, storageKey, null);
    }
    sessionStorage.removeItem(storageKey);
  }
  new StoryPage(flow, storageKey, null).mount(main.querySelector<HTMLFormElement>('#story')!);
}

/** The app area of a fragment page; without a code, the paste form is kept and read here (the code never leaves the browser in a URL). */
function withCode(prefix: string, run: (code: string) => Promise<void>) {
  const app = main.querySelector<HTMLElement>('#app')!;
  const start = (code: string) => run(code).catch((err: unknown) => render(app, errorView(err instanceof Offline ? M.offline : (err as Error).message)));
  const code = takeCode(prefix);
  if (code) return start(code);
  app.querySelector('noscript')?.remove();
  app.insertAdjacentHTML('afterbegin', errorView(M.linkMissing).text);
  app.querySelector('#paste-form')?.addEventListener('submit', (e) => {
    e.preventDefault();
    const typed = app.querySelector<HTMLInputElement>('#code')!.value.trim().replace(/^.*#/, '');
    if (typed.startsWith(prefix)) {
      sessionStorage.setItem(`code:${data.page}`, typed);
      void start(typed);
    } else render(app, errorView(M.codes.UNAUTHORIZED));
  });
}

const failed = (res: Answer) => errorView(refusal(res.code, res.error));

async function requestPage(code: string) {
  const res = await call('POST', '/api/proof/collect/drafts', { 'x-link-token': code }, {});
  if (res.status !== 201 && res.status !== 200) {
    render(main, failed(res));
    return;
  }
  showDraftForm(res.data.flow, res.data.draft, res.data.draftSession, 'draft:request', code);
}

async function continuePage(code: string) {
  const storageKey = 'draft:continue';
  const saved = sessionStorage.getItem(storageKey);
  if (saved) {
    const ref = JSON.parse(saved) as DraftRef;
    const current = await call('GET', `/api/proof/collect/drafts/${ref.id}`, { 'x-draft-session': ref.session });
    if (current.status === 200 && current.data.draft.status === 'open') return showDraftForm(current.data.flow, current.data.draft, ref.session, storageKey,
      null);
  }
  const res = await call('POST', '/api/proof/collect/continue', { 'x-link-token': code }, {});
  if (res.status !== 200) return render(main, failed(res));
  sessionStorage.setItem(storageKey, JSON.stringify({ id: res.data.draft.id, session: res.data.draftSession }));
  showDraftForm(res.data.flow, res.data.draft, res.data.draftSession, storageKey, null);
}

/** Forms marked data-api post to the API here (the same forms post to the server without JavaScript). */
function onApiForms(root: HTMLElement, handler: (form: HTMLFormElement, fields: Record<string, string>) => Promise<void>) {
  root.addEventListener('submit', (e) => {
    const form = e.target as HTMLFormElement;
    if (!form.matches('form[data-api], form[data-download]')) return;
    e.preventDefault();
    const fields = Object.fromEntries([...new FormData(form)].map(([k, v]) => [k, String(v)]));
    for (const b of form.querySelectorAll<HTMLButtonElement>('button')) b.disabled = true;
    void handler(form, fields).catch((err: unknown) => {
      for (const b of form.querySelectorAll<HTMLButtonElement>('button')) b.disabled = false;
      form.insertAdjacentHTML('beforeend', errorView(err instanceof Offline ? M.offline : (err as Error).message).text);
    });
  });
}

async function controlPage(code: string) {
  const app = main.querySelector<HTMLElement>('#app')!;
  const headers = { 'x-control-token': code };
  const show = async (notice?: string, error?: string) => {
    const control = await call('GET', '/api/proof/collect/control', headers);
    if (control.status !== 200) return render(app, failed(control));
    const stories = control.data.stories as Story[];
    const passports: Record<string, Passport | null> = {};
    await Promise.all(stories.map(async (s) => {
      const p = await call('GET', `/api/proof/collect/control/passport?proofItemId=${encodeURIComponent(s.proofItemId)}`, headers);
      passports[s.proofItemId] = p.status === 200 ? p.data : null;
    }));
    render(app, controlView(stories, passports, { base: data.base, code: null }, notice, error));
    if (notice || error) focusFirst(app, '[role="status"], [role="alert"]');
  };
  onApiForms(app, async (form, fields) => {
    if (form.dataset.download) {
      const what = form.dataset.download;
      const url = what === 'passport'
        ? `/api/proof/collect/control/passport?proofItemId=${encodeURIComponent(fields.proofItemId)}&download=1`
        : `/api/proof/collect/control/receipt?proofItemId=${encodeURIComponent(fields.proofItemId)}`;
      const res = await fetch(url, { headers, credentials: 'omit' });
      if (!res.ok) throw new Error(M.codes.NOT_FOUND);
      download(await res.blob(), `${what}-${fields.proofItemId}.json`);
      for (const b of form.querySelectorAll<HTMLButtonElement>('button')) b.disabled = false;
      return;
    }
    if (form.dataset.api === 'person-link') {
      const res = await call('POST', '/api/proof/collect/control/person-link', headers, { email: fields.email });
      return show(res.status < 300 ? M.personLinkSent : undefined, res.status < 300 ? undefined : refusal(res.code, res.error));
    }
    const body: Record<string, unknown> = { ...fields };
    if (fields.confirm) body.confirm = fields.confirm === 'true';
    if (fields.reason === '') delete body.reason;
    const res = await call('POST', '/api/proof/collect/control', headers, body);
    return show(res.status < 300 ? (fields.action === 'approve_wording' ? M.approvedNotice : M.done) : undefined,
      res.status < 300 ? undefined : refusal(res.code, res.error));
  });
  await show();
}

async function reviewPage(code: string) {
  const app = main.querySelector<HTMLElement>('#app')!;
  const headers = { 'x-control-token': code };
  const show = async (notice?: string, error?: string) => {
    const res = await call('GET', '/api/proof/review', headers);
    if (res.status !== 200) return render(app, failed(res));
    render(app, reviewView([...res.data.versions, ...res.data.assets] as ReviewItem[], { base: data.base, code: null }, notice, error));
    if (notice || error) focusFirst(app, '[role="status"], [role="alert"]');
  };
  onApiForms(app, async (_form, fields) => {
    const res = await call('POST', '/api/proof/review', headers, { kind: fields.kind, id: fields.id, decision: fields.decision,
      contentHash: fields.contentHash });
    return show(res.status < 300 ? M.done : undefined, res.status < 300 ? undefined : refusal(res.code, res.error));
  });
  await show();
}

async function interviewPage(code: string) {
  const app = main.querySelector<HTMLElement>('#app')!;
  const headers = { 'x-interview-token': code };
  const show = async (error?: string) => {
    const res = await call('GET', '/api/proof/interview', headers);
    if (res.status !== 200) return render(app, failed(res));
    render(app, interviewView(res.data.interview as Interview, { base: data.base, code: null }, error));
    if (typeof MediaRecorder !== 'undefined') {
      for (const box of app.querySelectorAll<HTMLElement>('[data-media-for]')) box.hidden = false;
    }
  };
  app.addEventListener('click', (e) => {
    const button = (e.target as HTMLElement).closest<HTMLButtonElement>('[data-record-answer]');
    if (!button) return;
    button.disabled = true;
    void recordInterviewAnswer(button.parentElement!, code, button.dataset.recordAnswer!).finally(() => {
      button.disabled = false;
    });
  });
  onApiForms(app, async (_form, fields) => {
    const body = fields.action === 'finish' ? { action: 'finish' } : { questionId: fields.questionId, text: fields.text };
    const res = await call('POST', '/api/proof/interview', headers, body);
    return show(res.status < 300 ? undefined : refusal(res.code, res.error));
  });
  await show();
}

async function optOutPage(code: string) {
  render(main.querySelector<HTMLElement>('#app')!, optOutForm({ base: data.base, code: null }));
  bindOptOut(code);
}

const pages: Record<string, () => unknown> = {
  flow: flowPage,
  r: () => withCode('pr_', requestPage),
  continue: () => withCode('cl_', continuePage),
  control: () => withCode('ct_', controlPage),
  review: () => withCode('ct_', reviewPage),
  interview: () => withCode('iv_', interviewPage),
  'opt-out': () => withCode('pr_', optOutPage),
};
void pages[data.page]?.();
