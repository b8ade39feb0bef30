import { messages } from './messages';

/**
 * Votes and follows on the public board (docs/customer-loop.md#public-roadmap). The product hands the page an
 * end-user token: in the fragment (`/roadmap/{productId}#token=<jwt>`, read and removed from the address
 * bar at once), and, because every write spends a token's nonce, a fresh one per write by postMessage: the
 * page asks its opener (or parent) with `{type: "sv-roadmap:token-request"}` and takes the answer
 * `{type: "sv-roadmap:token", token}` from that window only.
 */
const data = JSON.parse(document.getElementById('page-data')?.textContent ?? '{}') as { productId?: string };
const productId = data.productId ?? '';
const api = `/api/public/roadmap/${encodeURIComponent(productId)}`;
const status = document.getElementById('rm-status');
const provider = window.opener ?? (window.parent !== window ? window.parent : null);

/** A token not yet spent on a write (reads do not spend it). */
let unspent: string | null = null;
let reader: string | null = null;
let waiting: ((token: string | null) => void) | null = null;

window.addEventListener('message', (event) => {
  const message = event.data as { type?: string; token?: unknown } | null;
  if (event.source !== provider || message?.type !== 'sv-roadmap:token' || typeof message.token !== 'string') return;
  const first = reader === null;
  unspent = reader = message.token;
  if (waiting) waiting(message.token);
  waiting = null;
  if (first) void signIn();
});

function say(text: string): void {
  if (status) status.textContent = text;
}

async function freshToken(): Promise<string | null> {
  if (unspent) return unspent;
  if (!provider) return null;
  return new Promise((resolve) => {
    waiting = resolve;
    provider.postMessage({ type: 'sv-roadmap:token-request', productId }, '*');
    setTimeout(() => {
      if (waiting === resolve) {
        waiting = null;
        resolve(null);
      }
    }, 5000);
  });
}

/** A toggle button: its name stays "Vote"/"Follow", its state is aria-pressed (styled by it). */
function press(button: Element, on: boolean): void {
  button.setAttribute('aria-pressed', String(on));
}

async function signIn(): Promise<void> {
  if (!reader) return;
  const res = await fetch(`${api}/me`, { headers: { authorization: `Bearer ${reader}` } });
  if (!res.ok) {
    say(messages.signedOut);
    return;
  }
  const me = ((await res.json()) as { data: { votedFeatureIds: string[]; followedFeatureIds: string[] } }).data;
  for (const button of document.querySelectorAll('.rm-button')) {
    const id = button.getAttribute('data-feature') ?? '';
    press(button, (button.getAttribute('data-action') === 'vote' ? me.votedFeatureIds : me.followedFeatureIds).includes(id));
  }
  for (const actions of document.querySelectorAll<HTMLElement>('.rm-actions')) actions.hidden = false;
  say(messages.signedIn);
}

async function act(button: HTMLButtonElement): Promise<void> {
  const featureId = button.getAttribute('data-feature') ?? '';
  const action = button.getAttribute('data-action');
  const on = button.getAttribute('aria-pressed') !== 'true';
  const token = await freshToken();
  if (!token) {
    say(messages.needToken);
    return;
  }
  unspent = null;
  button.disabled = true;
  try {
    const res = await fetch(`${api}/features/${encodeURIComponent(featureId)}/${action}`, {
      method: on ? 'PUT' : 'DELETE', headers: { authorization: `Bearer ${token}` },
    });
    if (!res.ok) throw new Error(String(res.status));
    const result = ((await res.json()) as { data: { voted: boolean; following: boolean; voteCount: number } }).data;
    for (const b of document.querySelectorAll(`.rm-button[data-feature="${CSS.escape(featureId)}"]`)) {
      press(b, b.getAttribute('data-action') === 'vote' ? result.voted : result.following);
    }
    const count = document.querySelector(`[data-count="${CSS.escape(featureId)}"]`);
    if (count) count.textContent = messages.votes(result.voteCount);
  } catch {
    say(messages.failed);
  } finally {
    button.disabled = false;
  }
}

document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest<HTMLButtonElement>('.rm-button') : null;
  if (button) void act(button);
});

// A link to one feature (`?feature=`) lands on it, the fragment being the token's.
document.querySelector('.rm-feature[aria-current="true"]')?.scrollIntoView({ block: 'center' });

const fragment = new URLSearchParams(location.hash.slice(1)).get('token');
if (fragment) {
  history.replaceState(null, '', location.pathname + location.search);
  unspent = reader = fragment;
  void signIn();
} else if (provider) {
  provider.postMessage({ type: 'sv-roadmap:token-request', productId }, '*');
} else {
  say(messages.signedOut);
}
