import { SafeHtml, html } from '../shared/html';
import { consoleClient } from './api';
import { CONSOLE_MESSAGES as M } from './messages';
import { ConsoleState, failure, leaveView, render, status } from './view-kit';
import { CONSOLE_VIEWS, ViewName } from './views';

const VIEWS = Object.keys(CONSOLE_VIEWS) as ViewName[];
const main = document.getElementById('main')!;

/** The page outside the view: skip link, navigation with the current view marked, who is signed in, sign-out. */
function frame(state: ConsoleState, view: ViewName): void {
  document.querySelector('header.console')?.remove();
  const header = document.createElement('header');
  header.className = 'console';
  render(header, html`<a class="skip" href="#main">${M.skip}</a>
<nav aria-label="${M.nav}"><ul>${VIEWS.map((v) => html`<li><a href="/console/${v}" data-nav="${v}" ${v === view ? html`aria-current="page"` : ''}>${M.views[v]}</a></li>`)}</ul></nav>
<p class="who">${M.signedInAs(state.session.email, state.session.role)}</p>
<button type="button" id="sign-out">${M.signOut}</button>`);
  document.body.insertBefore(header, main);
  header.querySelector('#sign-out')!.addEventListener('click', async () => {
    await state.api.POST('/api/workspace/sign-out');
    history.replaceState(null, '', '/console/sign-in');
    void start();
  });
  header.querySelectorAll<HTMLAnchorElement>('a[data-nav]').forEach((a) => a.addEventListener('click', (event) => {
    event.preventDefault();
    history.pushState(null, '', a.href);
    void show(state);
  }));
}

async function show(state: ConsoleState): Promise<void> {
  leaveView();
  const name = location.pathname.replace(/^\/console\/?/, '').split('/')[0];
  const view: ViewName = Object.hasOwn(CONSOLE_VIEWS, name) ? (name as ViewName) : VIEWS[0];
  if (name !== view) history.replaceState(null, '', `/console/${view}`);
  frame(state, view);
  document.title = `${M.views[view]} · ${M.title}`;
  render(main, html`<p class="loading">${M.loading}</p>`);
  await CONSOLE_VIEWS[view](state, main);
  main.dataset.view = view;
}

function signInPage(message?: SafeHtml): void {
  document.querySelector('header.console')?.remove();
  document.title = `${M.signIn.heading} · ${M.title}`;
  render(main, html`<h1>${M.signIn.heading}</h1>${message ?? ''}<p>${M.signIn.intro}</p>
<form id="sign-in"><label>${M.signIn.email} <input name="email" type="email" autocomplete="email" required></label>
<button type="submit">${M.signIn.send}</button></form><div id="sign-in-status"></div><p class="hint">${M.signIn.noSmtp}</p>`);
  main.querySelector<HTMLFormElement>('#sign-in')!.addEventListener('submit', async (event) => {
    event.preventDefault();
    const email = String(new FormData(event.target as HTMLFormElement).get('email'));
    const res = await consoleClient().POST('/api/workspace/sign-in', { body: { email } });
    render(main.querySelector('#sign-in-status')!, res.data ? status(M.signIn.sent) : failure(res.error, res.response));
  });
}

async function start(): Promise<void> {
  // A sign-in link's secret is in the fragment: read it, take it out of the address bar, trade it for a session.
  const secret = /^#(sl_[A-Za-z0-9_-]{43})$/.exec(location.hash)?.[1];
  if (secret) {
    history.replaceState(null, '', '/console/sign-in');
    render(main, html`<p class="loading">${M.signIn.completing}</p>`);
    const res = await consoleClient().POST('/api/workspace/sign-in/complete', { headers: { 'x-sign-in-token': secret } });
    if (!res.data) return signInPage(status(M.signIn.linkFailed, 'error'));
    history.replaceState(null, '', `/console/${VIEWS[0]}`);
  }
  const { data } = await consoleClient().GET('/api/workspace/session');
  if (!data) {
    if (!location.pathname.startsWith('/console/sign-in')) history.replaceState(null, '', '/console/sign-in');
    return signInPage();
  }
  const state: ConsoleState = { session: data.data, api: consoleClient(data.data.csrfToken) };
  if (location.pathname.startsWith('/console/sign-in')) history.replaceState(null, '', `/console/${VIEWS[0]}`);
  window.onpopstate = () => void show(state);
  await show(state);
}

// A sign-in link opened in a tab that already shows the console only changes the fragment (the skip link's #main
// changes it too, and must not start the console over).
window.addEventListener('hashchange', () => {
  if (location.hash.startsWith('#sl_')) void start();
});
void start();
