import dns from 'node:dns';
import { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { validationFailed } from './service-error';

const MAX_URL_LENGTH = 2048;
const DNS_TIMEOUT_MS = 2_000;

/**
 * True only for globally routable unicast addresses. Loopback, private, link-local (cloud metadata),
 * carrier-grade NAT, unspecified, multicast, reserved and translation ranges are all refused;
 * IPv4-mapped IPv6 is judged as the IPv4 address it carries, and IPv4-compatible IPv6 is refused.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    // IPv4-compatible addresses (::a.b.c.d, deprecated) can still reach IPv4 targets through tunnels.
    else if (v6.parts.slice(0, 6).every((part) => part === 0)) return false;
  }
  return parsed.range() === 'unicast';
}

/** The URL's host as Node's parser normalised it (decimal, octal and hex IPv4 forms become dotted). */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
}

function refuse(message: string): never {
  throw validationFailed([{ path: 'url', message }], `webhook URL refused: ${message}`);
}

async function resolveAll(host: string): Promise<string[] | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const lookup = dns.promises.lookup(host, { all: true, verbatim: true });
    const timeout = new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), DNS_TIMEOUT_MS); });
    const result = await Promise.race([lookup, timeout]);
    return result ? result.map((r) => r.address) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Checks a webhook URL when an endpoint is created or changed: public https, no credentials, and a host
 * that is not, and does not resolve to, a non-public address. A name that does not resolve now is
 * accepted; every delivery checks the address it actually connects to (see `publicOnlyLookup`).
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean): Promise<string> {
  if (raw.length > MAX_URL_LENGTH) refuse(`longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) refuse('must use https');
  if (url.username || url.password) refuse('must not carry credentials');
  const host = hostOf(url);
  if (!host) refuse('has no host');
  if (allowPrivate) return url.toString();
  if (ipaddr.isValid(host)) {
    if (!isPublicAddress(host)) refuse(`${host} is not a public address`);
    return url.toString();
  }
  if (host === 'localhost' || host.endsWith('.localhost')) refuse('localhost is not allowed');
  const addresses = await resolveAll(host);
  const blocked = addresses?.find((a) => !isPublicAddress(a));
  if (blocked) refuse(`${host} resolves to ${blocked}, which is not a public address`);
  return url.toString();
}

/**
 * A `lookup` for http.request that refuses non-public addresses, so the address checked is the address
 * connected to: no window for DNS rebinding between a check and the connection.
 */
export function publicOnlyLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as dns.LookupAddress[];
      const blocked = allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (blocked) {
        const refusal = Object.assign(new Error(`${hostname} resolves to non-public ${blocked.address}`), { code: 'EBLOCKEDADDRESS' });
        return callback(refusal, '', 0);
      }
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

/** For IP-literal URLs, which Node connects to without a lookup. */
export function literalTargetAllowed(url: URL, allowPrivate: boolean): boolean {
  const host = hostOf(url);
  return allowPrivate || !ipaddr.isValid(host) || isPublicAddress(host);
}

export function warnIfPrivateTargetsAllowed(allowPrivate: boolean, log: (line: string) => void = console.warn): void {
  if (allowPrivate) {
    log('[sv] WARNING: WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhooks may reach loopback and private addresses over http. Development and tests only.');
  }
}
