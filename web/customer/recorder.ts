import { html } from '../shared/html';
import { Offline, call, forget, keep, recall, sha256Hex, sleep } from './api';
import { M, refusal } from './messages';

type Source = 'camera' | 'microphone' | 'screen' | 'file';
export interface DraftRef { id: string; session: string }

/** Parts of 256 KiB: small enough that a dropped connection costs little, few enough for any recording (≤ 10,000 parts). */
export const PART_SIZE = 256 * 1024;

interface Pending { blob: Blob; kind: string; source: Source }
interface UploadState { id: string; token: string; kind: string }

const kindOf = (type: string) => (type.startsWith('video/') ? 'video' : type.startsWith('audio/') ? 'audio' : type.startsWith('image/') ? 'image' : null);

/**
 * Records from the camera, microphone or screen (MediaRecorder) or takes a chosen file, lets the person
 * review, record again or remove it, then sends it through the resumable upload API in parts with a
 * progress bar. A failed part is sent again until the connection returns; after a reload the recording
 * (kept in IndexedDB) resumes from the parts the upload already holds.
 */
export class MediaPanel {
  private readonly stage: HTMLElement;
  private readonly status: HTMLElement;
  private readonly progress: HTMLProgressElement;
  private busy = false;
  private attached: UploadState | null = null;
  private stream: MediaStream | null = null;
  private recorder: MediaRecorder | null = null;

  constructor(
    private readonly section: HTMLElement,
    private readonly opts: { maxSeconds: number; consentVersionId: string | null; draft: () => Promise<DraftRef>; storageKey: string },
  ) {
    this.stage = section.querySelector<HTMLElement>('#media-stage')!;
    this.status = section.querySelector<HTMLElement>('#media-status')!;
    this.progress = section.querySelector<HTMLProgressElement>('#media-progress')!;
    section.hidden = false;
    if (typeof MediaRecorder === 'undefined' || !navigator.mediaDevices) {
      for (const b of section.querySelectorAll<HTMLButtonElement>('[data-record]')) b.hidden = true;
      this.say(M.noRecorder);
    }
    section.addEventListener('click', (e) => {
      const button = (e.target as HTMLElement).closest<HTMLButtonElement>('button[data-record]');
      if (button) void this.record(button.dataset.record as Source);
    });
    section.querySelector<HTMLInputElement>('#media-file')?.addEventListener('change', (e) => {
      const file = (e.target as HTMLInputElement).files?.[0];
      const kind = file ? kindOf(file.type) : null;
      if (file && kind) this.review({ blob: file, kind, source: 'file' });
    });
  }

  /** True while a file is being sent: the story waits for it. */
  get sending(): boolean {
    return this.busy;
  }

  private say(text: string) {
    this.status.textContent = text;
  }

  private async record(source: Source) {
    if (this.busy) return;
    if (source === 'screen' && !this.section.querySelector<HTMLInputElement>('#screen-consent')?.checked) {
      this.say(M.screenConsentNeeded);
      this.section.querySelector<HTMLInputElement>('#screen-consent')?.focus();
      return;
    }
    try {
      this.stream = source === 'screen'
        ? await navigator.mediaDevices.getDisplayMedia({ video: true, audio: true })
        : await navigator.mediaDevices.getUserMedia(source === 'camera' ? { video: true, audio: true } : { audio: true });
    } catch {
      this.say(M.mediaDenied);
      return;
    }
    const kind = source === 'microphone' ? 'audio' : 'video';
    const type = [`${kind}/webm;codecs=${kind === 'video' ? 'vp8,opus' : 'opus'}`, `${kind}/webm`, `${kind}/mp4`].find((t) => MediaRecorder.isTypeSupported(t));
    const recorder = new MediaRecorder(this.stream, type ? { mimeType: type } : undefined);
    this.recorder = recorder;
    const chunks: Blob[] = [];
    recorder.ondataavailable = (e) => {
      if (e.data.size) chunks.push(e.data);
    };
    this.stage.replaceChildren();
    this.stage.innerHTML = html`${kind === 'video' ? html`<video class="live" muted playsinline autoplay aria-label="${M.recordVideo}"></video>` : ''}
<button type="button" id="stop-recording" class="primary">${M.stop}</button>`.text;
    const live = this.stage.querySelector<HTMLVideoElement>('video.live');
    if (live) live.srcObject = this.stream;
    const started = Date.now();
    const tick = setInterval(() => {
      const s = Math.round((Date.now() - started) / 1000);
      this.say(M.recording(s));
      if (s >= this.opts.maxSeconds) stop();
    }, 500);
    const stop = () => {
      if (recorder.state !== 'inactive') recorder.stop();
    };
    recorder.onstop = () => {
      clearInterval(tick);
      for (const track of this.stream?.getTracks() ?? []) track.stop();
      this.stream = null;
      this.recorder = null;
      this.review({ blob: new Blob(chunks, { type: recorder.mimeType || `${kind}/webm` }), kind, source });
    };
    this.stage.querySelector('#stop-recording')!.addEventListener('click', stop);
    this.stage.querySelector<HTMLButtonElement>('#stop-recording')!.focus();
    recorder.start(1000);
    this.say(M.recording(0));
  }

  /** Review before sending: watch or listen, then use it, record again or remove. */
  private review(p: Pending) {
    const url = URL.createObjectURL(p.blob);
    const player = p.kind === 'image'
      ? html`<img src="${url}" alt="${M.review}">`
      : p.kind === 'audio' ? html`<audio controls src="${url}" aria-label="${M.review}"></audio>`
      : html`<video controls playsinline src="${url}" aria-label="${M.review}"></video>`;
    this.stage.innerHTML = html`<h3>${M.review}</h3>${player}<div class="row">
<button type="button" class="primary" data-act="use">${M.useIt}</button>
${p.source === 'file' ? '' : html`<button type="button" data-act="again">${M.again}</button>`}
<button type="button" data-act="remove">${M.remove}</button></div>`.text;
    this.say('');
    this.stage.querySelector<HTMLButtonElement>('[data-act="use"]')!.focus();
    this.stage.querySelector('[data-act="use"]')!.addEventListener('click', () => void this.send(p));
    this.stage.querySelector('[data-act="again"]')?.addEventListener('click', () => void this.record(p.source));
    this.stage.querySelector('[data-act="remove"]')!.addEventListener('click', () => {
      URL.revokeObjectURL(url);
      this.stage.replaceChildren();
    });
  }

  private uploadsKey(draftId: string) {
    return `${this.opts.storageKey}:upload:${draftId}`;
  }

  private async send(p: Pending) {
    if (this.busy) return;
    this.busy = true;
    for (const b of this.stage.querySelectorAll<HTMLButtonElement>('button')) b.disabled = true;
    try {
      const draft = await this.opts.draft();
      const sha256 = await sha256Hex(p.blob);
      const capture = { source: p.source, ...(p.source === 'screen' ? { screenConsent: true, consentVersionId: this.opts.consentVersionId } : {}) };
      const opened = await this.retrying(() => call('POST', `/api/proof/collect/drafts/${draft.id}/uploads`, { 'x-draft-session': draft.session }, {
        kind: p.kind, size: p.blob.size, sha256, partSize: PART_SIZE, capture,
      }));
      if (opened.status !== 201) throw new Error(refusal(opened.code, opened.error));
      const state: UploadState = { id: opened.data.upload.id, token: opened.data.uploadToken, kind: p.kind };
      await keep(this.uploadsKey(draft.id), { ...state, blob: p.blob });
      sessionStorage.setItem(this.uploadsKey(draft.id), state.id);
      await this.sendParts(draft, state, p.blob, new Set());
    } catch (err) {
      this.say(M.uploadFailed((err as Error).message));
      for (const b of this.stage.querySelectorAll<HTMLButtonElement>('button')) b.disabled = false;
    } finally {
      this.busy = false;
    }
  }

  /** A call that did not reach the service is tried again, with a growing pause, until it does. */
  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    for (let wait = 500; ; wait = Math.min(wait * 2, 8000)) {
      try {
        return await attempt();
      } catch (err) {
        if (!(err instanceof Offline)) throw err;
        this.say(M.retrying);
        await sleep(wait);
      }
    }
  }

  private async sendParts(draft: DraftRef, state: UploadState, blob: Blob, received: Set<number>) {
    const count = Math.max(1, Math.ceil(blob.size / PART_SIZE));
    const show = () => {
      const pct = Math.round((received.size / count) * 100);
      this.progress.hidden = false;
      this.progress.value = pct;
      this.say(M.uploading(pct));
    };
    show();
    const headers = { 'x-upload-token': state.token };
    const base = `/api/proof/collect/drafts/${draft.id}/uploads/${state.id}`;
    for (let n = 1; n <= count; n += 1) {
      if (received.has(n)) continue;
      const part = blob.slice((n - 1) * PART_SIZE, n * PART_SIZE);
      await this.retrying(async () => {
        let res: Response;
        try {
          res = await fetch(`${base}?part=${n}`, { method: 'PUT', headers: { ...headers, 'content-type': 'application/octet-stream' }, body: part,
            credentials: 'omit' });
        } catch (err) {
          throw new Offline((err as Error).message);
        }
        if (res.status >= 500 || res.status === 429) throw new Offline(String(res.status));
        if (!res.ok) {
          const body = await res.json().catch(() => null) as { error?: string; code?: string } | null;
          throw new Error(refusal(body?.code, body?.error));
        }
      });
      received.add(n);
      show();
    }
    let done = await this.retrying(() => call('POST', base, headers));
    while (done.status === 202 || (done.status === 200 && done.data?.upload?.status === 'assembling')) {
      await sleep(1000);
      done = await this.retrying(() => call('GET', base, headers));
    }
    const upload = done.data?.upload ?? done.data;
    if (done.status >= 300 || upload?.status !== 'complete') throw new Error(refusal(done.code, done.error ?? upload?.lastError));
    await forget(this.uploadsKey(draft.id));
    this.attached = state;
    this.showAttached(draft, blob);
  }

  private showAttached(draft: DraftRef, blob: Blob | null) {
    const state = this.attached!;
    const url = blob ? URL.createObjectURL(blob) : null;
    const player = !url ? '' : state.kind === 'image' ? html`<img src="${url}" alt="${M.review}">`
      : state.kind === 'audio' ? html`<audio controls src="${url}" aria-label="${M.review}"></audio>`
      : html`<video controls playsinline src="${url}" aria-label="${M.review}"></video>`;
    this.stage.innerHTML = html`${player}<p class="notice" data-state="attached">${M.attached}</p>
<button type="button" data-act="detach">${M.remove}</button>`.text;
    this.progress.value = 100;
    this.say(M.attached);
    this.stage.querySelector('[data-act="detach"]')!.addEventListener('click', async () => {
      const res = await call('DELETE', `/api/proof/collect/drafts/${draft.id}/uploads/${state.id}`, { 'x-upload-token': state.token });
      if (res.status === 204) {
        this.attached = null;
        sessionStorage.removeItem(this.uploadsKey(draft.id));
        this.stage.replaceChildren();
        this.progress.hidden = true;
        this.say('');
      } else this.say(refusal(res.code, res.error));
    });
  }

  /** After a reload: an upload this tab started picks up from the parts the service already holds. */
  async resume(draft: DraftRef): Promise<void> {
    const saved = await recall<UploadState & { blob: Blob }>(this.uploadsKey(draft.id)).catch(() => undefined);
    if (!saved) return;
    const base = `/api/proof/collect/drafts/${draft.id}/uploads/${saved.id}`;
    const state = await call('GET', base, { 'x-upload-token': saved.token }).catch(() => null);
    const upload = state?.data?.upload;
    if (!upload || upload.status === 'cancelled' || upload.status === 'expired') {
      await forget(this.uploadsKey(draft.id));
      return;
    }
    const { blob, ...rest } = saved;
    if (upload.status === 'complete') {
      this.attached = rest;
      await forget(this.uploadsKey(draft.id));
      this.showAttached(draft, blob);
      return;
    }
    this.busy = true;
    this.say(M.resuming);
    try {
      await this.sendParts(draft, rest, blob, new Set((upload.receivedParts as Array<{ number: number }>).map((p) => p.number)));
    } catch (err) {
      this.say(M.uploadFailed((err as Error).message));
    } finally {
      this.busy = false;
    }
  }

  /** Stops a recording in progress (leaving the page). */
  stop(): void {
    if (this.recorder && this.recorder.state !== 'inactive') this.recorder.stop();
  }
}

/** An interview's recorded answer: one video, sent whole (the interview API takes one request). */
export async function recordInterviewAnswer(box: HTMLElement, token: string, questionId: string, maxSeconds = 120): Promise<void> {
  const stage = box.querySelector<HTMLElement>('.media-stage')!;
  const status = box.querySelector<HTMLElement>('.status')!;
  let stream: MediaStream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: true, audio: true });
  } catch {
    status.textContent = M.mediaDenied;
    return;
  }
  const type = ['video/webm;codecs=vp8,opus', 'video/webm', 'video/mp4'].find((t) => MediaRecorder.isTypeSupported(t));
  const recorder = new MediaRecorder(stream, type ? { mimeType: type } : undefined);
  const chunks: Blob[] = [];
  recorder.ondataavailable = (e) => {
    if (e.data.size) chunks.push(e.data);
  };
  stage.innerHTML = html`<video class="live" muted playsinline autoplay aria-label="${M.recordAnswer}"></video><button type="button" class="primary">${M.stop}</button>`.text;
  stage.querySelector<HTMLVideoElement>('video')!.srcObject = stream;
  const timer = setTimeout(() => recorder.state !== 'inactive' && recorder.stop(), maxSeconds * 1000);
  stage.querySelector('button')!.addEventListener('click', () => recorder.state !== 'inactive' && recorder.stop());
  recorder.start(1000);
  status.textContent = M.recording(0);
  await new Promise<void>((resolve) => {
    recorder.onstop = () => resolve();
  });
  clearTimeout(timer);
  for (const track of stream.getTracks()) track.stop();
  const blob = new Blob(chunks, { type: recorder.mimeType || 'video/webm' });
  stage.replaceChildren();
  const opened = await call('POST', '/api/proof/interview', { 'x-interview-token': token },
    { action: 'start_upload', questionId, size: blob.size, sha256: await sha256Hex(blob) });
  if (opened.status !== 201) {
    status.textContent = refusal(opened.code, opened.error);
    return;
  }
  status.textContent = M.uploading(0);
  const res = await fetch(`/api/proof/interview/uploads/${opened.data.upload.id}`, {
    method: 'PUT', headers: { 'x-upload-token': opened.data.uploadToken, 'content-type': 'application/octet-stream' }, body: blob, credentials: 'omit',
  });
  status.textContent = res.status === 201 ? M.answered : refusal((await res.json().catch(() => ({}))).code, undefined);
}
