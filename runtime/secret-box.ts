import fs from 'node:fs';
import path from 'node:path';
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { Config, ConfigError, loadConfig } from './config';

/**
 * Secrets the service must use again (webhook signing secrets, product identity secrets, Ed25519
 * private keys) are stored sealed: AES-256-GCM under a key-encryption key, as
 * `sv1:<kid>:<iv>:<ciphertext>:<tag>` (base64url parts). The key id lets a rotation add a new key
 * while values sealed under the old one still open; see docs/platform.md.
 */
export interface KeyRing {
  current: string;
  keys: Map<string, Buffer>;
}

const PREFIX = 'sv1';
let ring: KeyRing | null = null;

/** `SV_SECRET_KEYS`: `kid:base64key[,kid:base64key...]`, the first one seals; 32-byte keys. */
export function parseKeyRing(spec: string, source = 'SV_SECRET_KEYS'): KeyRing {
  const keys = new Map<string, Buffer>();
  let current = '';
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const match = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/_=-]+)$/.exec(part);
    const key = match ? Buffer.from(match[2], 'base64') : null;
    if (!match || !key || key.length !== 32) throw new ConfigError(`${source} must be kid:base64 entries of 32-byte keys`);
    keys.set(match[1], key);
    if (!current) current = match[1];
  }
  if (!current) throw new ConfigError(`${source} names no key`);
  return { current, keys };
}

/** The embedded default: a key generated once under SV_DATA_DIR, readable by its owner only. */
function defaultKeyRing(dataDir: string): KeyRing {
  const file = path.join(dataDir, 'secret-keys');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    try {
      fs.writeFileSync(file, `k1:${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another role created it at the same moment: use theirs.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return parseKeyRing(fs.readFileSync(file, 'utf8'), file);
}

/**
 * Outside the embedded default (DATABASE_URL set) the roles run apart, each with a data folder of its
 * own, so a key generated per folder would seal what no other role can open: the key ring must be given.
 */
export function assertSecretKeysConfigured(config: Pick<Config, 'databaseUrl' | 'secretKeys'>): void {
  if (config.databaseUrl && !config.secretKeys) {
    throw new ConfigError('SV_SECRET_KEYS must be set when DATABASE_URL is: every role and the sv CLI need the same key ring; make one with `sv secret-keys ' +
      'generate`');
  }
  if (config.secretKeys) parseKeyRing(config.secretKeys);
}

/** A new key ring value of one key, for SV_SECRET_KEYS; its id names the day it was made. */
export function generateKeyRingValue(now = new Date()): string {
  return `k${now.toISOString().slice(0, 10).replace(/-/g, '')}:${randomBytes(32).toString('base64')}`;
}

/** A sealed value this process cannot open: its key is not in the ring, or the ring's key is not the one that sealed it. */
export class SealedSecretError extends Error {
  constructor(readonly keyId: string, reason: string) {
    super(`a secret sealed under key "${keyId}" cannot be opened: ${reason}; every role needs the same SV_SECRET_KEYS`);
    this.name = 'SealedSecretError';
  }
}

export function configureSecretKeys(keys: KeyRing): void {
  ring = keys;
}

function keyRing(): KeyRing {
  if (!ring) {
    const config = loadConfig();
    ring = config.secretKeys ? parseKeyRing(config.secretKeys) : defaultKeyRing(config.dataDir);
  }
  return ring;
}

export const isSealed = (stored: string) => stored.startsWith(`${PREFIX}:`);

export function sealSecret(plain: string): string {
  const { current, keys } = keyRing();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keys.get(current)!, iv);
  // The key id is bound in, so a value cannot be moved under another key's name.
  cipher.setAAD(Buffer.from(current));
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [PREFIX, current, iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(':');
}

/** Opens a sealed value; a plaintext value from before sealing is answered as it is (until it is sealed). */
export function openSecret(stored: string): string {
  if (!isSealed(stored)) return stored;
  const [, kid, iv, ct, tag] = stored.split(':');
  const key = keyRing().keys.get(kid);
  if (!key) throw new SealedSecretError(kid, 'SV_SECRET_KEYS does not hold that key');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(kid));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedSecretError(kid, 'the key of that id in SV_SECRET_KEYS is not the one that sealed it');
  }
}

/** Whether a stored value should be sealed again: plaintext, or sealed under a key that no longer seals. */
export function needsResealing(stored: string): boolean {
  return !isSealed(stored) || stored.split(':')[1] !== keyRing().current;
}

/**
 * A MAC key per purpose, derived from a ring key (HKDF-SHA256), so a MAC never uses the key that seals
 * and one purpose's MACs never verify as another's.
 */
function macKey(key: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `sv-mac:${purpose}`, 32));
}

/** HMAC-SHA256 of `message` for `purpose` under the sealing key, as base64url. */
export function ringMac(purpose: string, message: string): string {
  const { current, keys } = keyRing();
  return createHmac('sha256', macKey(keys.get(current)!, purpose)).update(message).digest('base64url');
}

/** Whether `mac` is `ringMac(purpose, message)` under any key of the ring (a rotation keeps older MACs good). */
export function ringMacVerifies(purpose: string, message: string, mac: string): boolean {
  const given = Buffer.from(mac, 'utf8');
  return [...keyRing().keys.values()].some((key) => {
    const expected = Buffer.from(createHmac('sha256', macKey(key, purpose)).update(message).digest('base64url'), 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/** The TypeORM column transformer of a sealed column. */
export const sealedColumn = {
  to: (value: string | null | undefined) => (typeof value === 'string' ? sealSecret(value) : value),
  from: (value: string | null) => (value === null ? null : openSecret(value)),
};
