import ipaddr from 'ipaddr.js';
import { sha256Hex } from '../../db/rules/secrets';

/**
 * The digest that rate limits and upload quotas count a client by. One IPv6 subscriber is handed a whole
 * /64, so counting single IPv6 addresses would let a client rotate through them: an IPv6 client is its /64
 * (an IPv4-mapped address is its IPv4 address). Only the digest is stored, never the address.
 */
export function clientAddressDigest(ip: string): string {
  let digest = recent.get(ip);
  if (digest === undefined) {
    // Every public request is counted by it, and a visitor's requests come in runs: keep the recent ones.
    if (recent.size >= RECENT_LIMIT) recent.clear();
    recent.set(ip, digest = digestOf(ip));
  }
  return digest;
}

const RECENT_LIMIT = 10_000;
const recent = new Map<string, string>();

function digestOf(ip: string): string {
  if (!ipaddr.isValid(ip)) return sha256Hex(ip);
  let parsed = ipaddr.parse(ip);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  if (parsed.kind() === 'ipv4') return sha256Hex(parsed.toString());
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return sha256Hex(`${parts.join(':')}::/64`);
}
