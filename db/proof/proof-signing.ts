import { KeyObject, createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, sign, timingSafeEqual, verify } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { canonicalJson, signedTextOf } from '../rules/canonical-json';
import { newId } from '../rules/ids';
import { openSecret, sealSecret } from '../../runtime/secret-box';

/**
 * The service's Ed25519 keys (render manifests, receipts) and the beacon's event tokens. The private
 * key lives in the database (table proof_signing_keys), sealed like webhook secrets (runtime/secret-box.ts); the first key is generated when none exists, and a
 * rotation retires the old one, which
 * stays in the key set so that every earlier signature keeps verifying.
 */

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Keyed per signing key, so a rotation also rotates the beacon tokens. */
  tokenSecret: Buffer;
  /** The MAC key of the video host's source links (HKDF info `stream-source`). */
  streamSourceSecret: Buffer;
}

export interface Signature {
  alg: 'EdDSA';
  kid: string;
  value: string;
}

/** A signature as someone presents it: any `alg` may be claimed, and only EdDSA verifies. */
export type ClaimedSignature = Omit<Signature, 'alg'> & { alg: string };

interface KeyRow { id: string; state: string; public_jwk: Record<string, string>; private_key_pem: string; created_at: Date }

// Keys never change once written, so every process may keep them; only "which one is active" is re-read.
const ACTIVE_TTL_MS = 60_000;
const byKid = new Map<string, SigningKey>();
const activeOf = new WeakMap<DataSource, { kid: string; at: number }>();

function toKey(row: KeyRow, remember = true): SigningKey {
  const known = byKid.get(row.id);
  if (known) return known;
  const pem = openSecret(row.private_key_pem);
  const privateKey = createPrivateKey(pem);
  const key: SigningKey = {
    kid: row.id,
    privateKey,
    publicKey: createPublicKey(privateKey),
    tokenSecret: Buffer.from(hkdfSync('sha256', pem, row.id, 'service-proof-event-token', 32)),
    streamSourceSecret: Buffer.from(hkdfSync('sha256', pem, row.id, 'stream-source', 32)),
  };
  if (remember) byKid.set(row.id, key);
  return key;
}

async function insertKey(em: EntityManager): Promise<void> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  await em.query(
    `INSERT INTO proof_signing_keys (id, state, public_jwk, private_key_pem) VALUES ($1, 'active', $2, $3)
     ON CONFLICT DO NOTHING`,
    [newId('sk'), JSON.stringify(publicKey.export({ format: 'jwk' })), sealSecret(privateKey.export({ format: 'pem', type: 'pkcs8' }) as string)],
  );
}

/**
 * The key that signs now; the first call on an empty database creates it (racing creators agree on
 * one). A caller inside a transaction passes its EntityManager: the key is read on the transaction's own
 * connection, because waiting for a second pooled connection while holding one deadlocks a busy pool.
 * A key created inside a caller's transaction is not cached, since a rollback could take it back.
 */
export async function activeSigningKey(ds: DataSource, em?: EntityManager): Promise<SigningKey> {
  const cached = activeOf.get(ds);
  if (cached && Date.now() - cached.at < ACTIVE_TTL_MS && byKid.has(cached.kid)) return byKid.get(cached.kid)!;
  const db = em ?? ds.manager;
  let rows: KeyRow[] = await db.query(`SELECT * FROM proof_signing_keys WHERE state = 'active'`);
  let createdHere = false;
  if (rows.length === 0) {
    await insertKey(db);
    createdHere = em !== undefined;
    rows = await db.query(`SELECT * FROM proof_signing_keys WHERE state = 'active'`);
  }
  const key = toKey(rows[0], !createdHere);
  if (!createdHere) activeOf.set(ds, { kid: key.kid, at: Date.now() });
  return key;
}

/** Retires the active key (kept for verification) and makes a new one active. */
export async function rotateSigningKey(ds: DataSource): Promise<string> {
  await ds.transaction(async (em) => {
    await em.query(`UPDATE proof_signing_keys SET state = 'retired', retired_at = now() WHERE state = 'active'`);
    await insertKey(em);
  });
  activeOf.delete(ds);
  return (await activeSigningKey(ds)).kid;
}

export async function signingKeyById(ds: DataSource, kid: string): Promise<SigningKey | null> {
  if (byKid.has(kid)) return byKid.get(kid)!;
  const rows: KeyRow[] = await ds.query(`SELECT * FROM proof_signing_keys WHERE id = $1`, [kid]);
  return rows.length ? toKey(rows[0]) : null;
}

/** The public key set (RFC 7517), newest first; retired keys stay for verifying older signatures. */
export async function publicKeySet(ds: DataSource) {
  await activeSigningKey(ds);
  const rows: KeyRow[] = await ds.query(`SELECT * FROM proof_signing_keys ORDER BY created_at DESC, id DESC`);
  return {
    keys: rows.map((r) => ({ ...r.public_jwk, kid: r.id, use: 'sig', alg: 'EdDSA', status: r.state })),
  };
}

/**
 * Ed25519 over the UTF-8 bytes of the RFC 8785 canonical JSON of `payload`, which names that form in
 * its `canonicalization` field (docs/proof.md, "Canonical JSON").
 */
export function signCanonical(key: SigningKey, payload: unknown): Signature {
  return signText(key, canonicalJson(payload));
}

export function signText(key: SigningKey, text: string): Signature {
  return { alg: 'EdDSA', kid: key.kid, value: sign(null, Buffer.from(text, 'utf8'), key.privateKey).toString('base64url') };
}

export async function verifyCanonical(ds: DataSource, payload: unknown, signature: ClaimedSignature): Promise<boolean> {
  if (signature.alg !== 'EdDSA') return false;
  const key = await signingKeyById(ds, signature.kid);
  if (!key) return false;
  // A document signed before the cut-over to RFC 8785 names no canonicalization and verifies over the old form.
  const text = signedTextOf(payload);
  if (text === null) return false;
  try {
    return verify(null, Buffer.from(text, 'utf8'), key.publicKey, Buffer.from(signature.value, 'base64url'));
  } catch {
    return false;
  }
}

export interface EventTokenClaims {
  placementId: string;
  proofItemId: string;
  /** Last UTC day (YYYY-MM-DD) the token is good for. */
  until: string;
}

const tokenMac = (key: SigningKey, body: string) => createHmac('sha256', key.tokenSecret).update(body).digest();

/**
 * The beacon's token: `<claims base64url>.<kid>.<HMAC-SHA256 base64url>`. A keyed MAC rather than an
 * Ed25519 signature because only this service checks it, and a render makes one per item.
 */
export function eventToken(key: SigningKey, claims: EventTokenClaims): string {
  const body = `${Buffer.from(canonicalJson([claims.placementId, claims.proofItemId, claims.until])).toString('base64url')}.${key.kid}`;
  return `${body}.${tokenMac(key, body).toString('base64url')}`;
}

export async function readEventToken(ds: DataSource, token: string, now: Date): Promise<EventTokenClaims | null> {
  const parts = token.split('.');
  if (parts.length !== 3 || token.length > 400) return null;
  const key = await signingKeyById(ds, parts[1]);
  if (!key) return null;
  const mac = Buffer.from(parts[2], 'base64url');
  const expected = tokenMac(key, `${parts[0]}.${parts[1]}`);
  if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return null;
  const [placementId, proofItemId, until] = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as string[];
  if (now.toISOString().slice(0, 10) > until) return null;
  return { placementId, proofItemId, until };
}
