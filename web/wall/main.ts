import canonicalize from 'canonicalize';
import { WALL_CSS } from './wall-css';
import { WallManifest, wallMarkup } from './wall-markup';

/** The service this script came from: `{base}/embed/wall.js` → `{base}/`. Everything it fetches is there. */
const BASE = new URL('..', import.meta.url);
const RENDER_SCHEMA = 'service-proof-render-v1';

interface Jwk { kid: string; kty: string; crv: string; x: string }
interface Signed { manifest: WallManifest; signature: { alg: string; kid: string; value: string } }

async function fetchJson<T>(path: string): Promise<T> {
  const url = new URL(path, BASE);
  const res = await fetch(url, { credentials: 'omit' });
  if (!res.ok) throw new Error(`${url.pathname} answered ${res.status}`);
  return (await res.json()) as T;
}

/** The key set, fetched once per page for every wall on it; fetched again when a manifest names a newer key. */
let keySet: Promise<Jwk[]> | null = null;
async function publicKey(kid: string): Promise<Jwk | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    keySet ??= fetchJson<{ keys: Jwk[] }>('api/public/proof/receipts/keys').then((set) => set.keys);
    const found = (await keySet).find((k) => k.kid === kid);
    if (found) return found;
    keySet = null;
  }
  return undefined;
}

const bytes = (base64url: string) => Uint8Array.from(atob(base64url.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));

/**
 * The placement's manifest, only if its Ed25519 signature verifies against the service's key set over the
 * RFC 8785 canonical JSON of what was received, it is this placement's and it has not expired; else throws why.
 */
async function verifiedManifest(placementId: string): Promise<WallManifest> {
  if (!globalThis.crypto?.subtle) throw new Error('WebCrypto is unavailable (the page is not a secure context)');
  const { manifest, signature } = await fetchJson<Signed>(`api/public/proof/render/${encodeURIComponent(placementId)}`);
  if (signature?.alg !== 'EdDSA') throw new Error('the manifest is not signed with EdDSA');
  const jwk = await publicKey(signature.kid);
  if (!jwk) throw new Error(`the manifest names an unknown signing key ${signature.kid}`);
  const key = await crypto.subtle.importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
  const signed = new TextEncoder().encode(canonicalize(manifest) ?? '');
  if (!(await crypto.subtle.verify({ name: 'Ed25519' }, key, bytes(signature.value), signed))) {
    throw new Error('the manifest signature does not verify: it was altered after signing');
  }
  if (manifest.schema !== RENDER_SCHEMA || manifest.canonicalization !== 'RFC8785') throw new Error(`the manifest is not ${RENDER_SCHEMA}`);
  if (manifest.placement.id !== placementId) throw new Error('the manifest is of another placement');
  if (!(Date.parse(manifest.expiresAt) > Date.now())) throw new Error(`the manifest expired at ${manifest.expiresAt}`);
  return manifest;
}

let sheet: CSSStyleSheet | null = null;

/** `<sv-proof-wall placement="plc_…">`: a placement's verified proof, in its own shadow root. */
class ProofWall extends HTMLElement {
  static observedAttributes = ['placement'];
  readonly #root = this.attachShadow({ mode: 'open' });
  #run = 0;
  #tokens = new Map<string, string>();
  #sent = new Set<string>();
  #observer: IntersectionObserver | null = null;

  constructor() {
    super();
    // Engagement: a click on a verify link, the first play of a recording (play does not bubble: capture).
    this.#root.addEventListener('click', (event) => this.#engaged(event.target, 'data-click', 'click'));
    this.#root.addEventListener('play', (event) => this.#engaged(event.target, 'data-play', 'play'), true);
  }

  connectedCallback(): void {
    void this.#load();
  }

  attributeChangedCallback(_name: string, old: string | null, value: string | null): void {
    if (old !== null && old !== value && this.isConnected) void this.#load();
  }

  disconnectedCallback(): void {
    this.#observer?.disconnect();
  }

  async #load(): Promise<void> {
    const run = ++this.#run;
    const placementId = this.getAttribute('placement') ?? '';
    this.#show(null);
    try {
      const manifest = await verifiedManifest(placementId);
      if (run === this.#run) this.#show(manifest);
    } catch (err) {
      console.error(`<sv-proof-wall placement="${placementId}">: nothing shown: ${(err as Error).message}`);
    }
  }

  #show(manifest: WallManifest | null): void {
    this.#observer?.disconnect();
    this.#tokens = new Map(manifest?.items.map((item) => [item.proofItemId, item.eventToken]));
    if (!manifest) {
      this.#root.replaceChildren();
      return;
    }
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(WALL_CSS);
    }
    this.#root.adoptedStyleSheets = [sheet];
    this.#root.innerHTML = wallMarkup(manifest, BASE).text;
    this.#observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        this.#observer?.unobserve(entry.target);
        this.#beacon(entry.target.getAttribute('data-item'), 'impression');
      }
    }, { threshold: 0.5 });
    for (const item of this.#root.querySelectorAll('[data-item]')) this.#observer.observe(item);
  }

  #engaged(target: EventTarget | null, attribute: string, type: string): void {
    const element = target instanceof Element ? target.closest(`[${attribute}]`) : null;
    if (element) this.#beacon(element.getAttribute(attribute), type);
  }

  /** One cookie-free beacon per item and kind for each load (the service counts a token once a day anyway). */
  #beacon(itemId: string | null, type: string): void {
    const token = itemId ? this.#tokens.get(itemId) : undefined;
    if (!token || this.#sent.has(`${token} ${type}`)) return;
    this.#sent.add(`${token} ${type}`);
    navigator.sendBeacon(new URL('api/public/proof/events', BASE), JSON.stringify({ token, type }));
  }
}

if (!customElements.get('sv-proof-wall')) customElements.define('sv-proof-wall', ProofWall);
