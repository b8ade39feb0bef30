import { DataSource } from 'typeorm';
import { ServiceKey } from '../entities';
import { sha256Hex } from '../rules/secrets';
import { queryPrepared } from '../prepared-statements';
import { sharedFreshRead } from '../../runtime/shared-fresh-read';

export interface KeyCheck {
  key: ServiceKey;
  productActive: boolean | null;
}

const keyReads = new WeakMap<DataSource, (digest: string) => Promise<KeyCheck | null>>();

/**
 * Finds the key a bearer secret names, with whether its product is active: one indexed read, shared by the
 * requests of the same key that arrive while one is under way (`sharedFreshRead`: never a read that began before
 * the request did, so a revocation refuses the very next request). Callers must not change the answer.
 */
export async function lookupServiceKey(ds: DataSource, secret: string): Promise<KeyCheck | null> {
  let read = keyReads.get(ds);
  if (!read) keyReads.set(ds, read = sharedFreshRead((digest: string) => readServiceKey(ds, digest)));
  return read(sha256Hex(secret));
}

async function readServiceKey(ds: DataSource, digest: string): Promise<KeyCheck | null> {
  return keyCheckOf((await queryPrepared<Record<string, any>>(ds, 'service-key-by-digest',
    // Named columns: a prepared `k.*` would fail once a migration adds one.
    `SELECT k.id, k.organization_id, k.product_id, k.environment, k.digest, k.prefix, k.scopes, k.created_by, k.expires_at,
            k.revoked_at, k.last_used_at, k.rotated_from_id, k.replaced_by_id, k.created_at, p.active AS product_active
       FROM service_keys k LEFT JOIN products p ON p.id = k.product_id WHERE k.digest = $1`,
    [digest],
  ))[0]);
}

function keyCheckOf(row: Record<string, any> | undefined): KeyCheck | null {
  if (!row) return null;
  const key = Object.assign(new ServiceKey(), {
    id: row.id,
    organizationId: row.organization_id,
    productId: row.product_id,
    environment: row.environment,
    digest: row.digest,
    prefix: row.prefix,
    scopes: row.scopes,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
    rotatedFromId: row.rotated_from_id,
    replacedById: row.replaced_by_id,
    createdAt: row.created_at,
  });
  return { key, productActive: row.product_active ?? null };
}

/** Records use at most once a minute per key, so the hot path does not write it on every request. */
export async function touchServiceKey(ds: DataSource, id: string): Promise<void> {
  await ds.query(
    `UPDATE service_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [id],
  );
}
