import { SafeHtml, html } from '../shared/html';
import { ConsoleClient, Schemas, Session, refusal } from './api';
import { CONSOLE_MESSAGES as M } from './messages';

/** What every view gets: who is signed in and the typed client carrying their CSRF token. */
export interface ConsoleState { session: Session; api: ConsoleClient }

/** A view draws itself into `target` from documented routes only. */
export type ConsoleView = (state: ConsoleState, target: HTMLElement) => Promise<void>;

export function render(target: Element, content: SafeHtml): void {
  target.innerHTML = content.text;
}

export function status(text: string, kind: 'ok' | 'error' = 'ok'): SafeHtml {
  return html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}

export function failure(error: unknown, response: Response): SafeHtml {
  const r = refusal(error, response.status);
  return status(r.status === 403 && r.code === 'FORBIDDEN' ? M.refusedRole : M.failed(r.code, r.message), 'error');
}

/** A story version's words as a person reads them: its title, then its text. */
export function versionWords(v: Schemas['ProofVersion']): string {
  const c = v.content as { text?: unknown; title?: unknown };
  return [typeof c.title === 'string' ? c.title : '', typeof c.text === 'string' ? c.text : ''].filter(Boolean).join('\n\n');
}

export const when = (iso: string) => new Date(iso).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });

export function duration(ms: number): string {
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  const h = Math.floor(minutes / 60);
  return h > 0 ? `${h} h ${minutes % 60} min` : `${minutes} min`;
}

export const isWriter = (s: Session) => s.role === 'owner' || s.role === 'admin';

/** A secret shown once, right after the write that made it. */
export function secretBox(label: string, secret: string): SafeHtml {
  return html`<div class="secret" role="status"><p>${label}</p><output data-field="secret">${secret}</output></div>`;
}

let leaving: (() => void) | null = null;

/** What to undo (a document-wide listener, say) when the teammate leaves the current view. */
export function onLeave(undo: () => void): void {
  leaving = undo;
}

export function leaveView(): void {
  leaving?.();
  leaving = null;
}
