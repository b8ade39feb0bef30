import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';

export const IDEMPOTENCY_KEY_PATTERN = /^[A-Za-z0-9._:-]{8,200}$/;
const RETENTION = '24 hours';
// A first call that has not finished within this time is taken to have died with its process.
const LOCK = '2 minutes';

export type IdempotencyClaim =
  | { kind: 'claimed'; token: string }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'in_progress' }
  | { kind: 'mismatch' };

/**
 * Claims an Idempotency-Key for one request. Exactly one concurrent caller wins the claim; the others
 * learn whether to replay, wait, or refuse a different request under the same key.
 */
export async function claimIdempotencyKey(
  ds: DataSource, credentialId: string, key: string, requestHash: string,
): Promise<IdempotencyClaim> {
  const token = randomUUID();
  const claimed: unknown[] = await ds.query(
    `INSERT INTO idempotency_records AS r
       (credential_id, idempotency_key, request_hash, state, claim_token, locked_until, expires_at)
     VALUES ($1, $2, $3, 'in_progress', $4, now() + interval '${LOCK}', now() + interval '${RETENTION}')
     ON CONFLICT (credential_id, idempotency_key) DO UPDATE
       SET request_hash = EXCLUDED.request_hash, state = 'in_progress', claim_token = EXCLUDED.claim_token, status_code = NULL,
           response_body = NULL, locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at,
           created_at = now()
       WHERE r.expires_at <= now() OR (r.state = 'in_progress' AND r.locked_until <= now())
     RETURNING 1`,
    [credentialId, key, requestHash, token],
  );
  if (claimed.length > 0) return { kind: 'claimed', token };
  const rows: Array<{ request_hash: string; state: string; status_code: number; response_body: string }> =
    await ds.query(
      `SELECT request_hash, state, status_code, response_body FROM idempotency_records
        WHERE credential_id = $1 AND idempotency_key = $2`,
      [credentialId, key],
    );
  const row = rows[0];
  // Released between our insert and this read: the caller may simply try again.
  if (!row) return { kind: 'in_progress' };
  if (row.request_hash !== requestHash) return { kind: 'mismatch' };
  if (row.state === 'in_progress') return { kind: 'in_progress' };
  return { kind: 'replay', statusCode: row.status_code, body: row.response_body };
}

export interface IdempotencyClaimRef {
  credentialId: string;
  key: string;
  token: string;
  /** What the key was claimed for (method, path, canonical body), so work derived from the key can tell requests apart. */
  requestHash: string;
}

/**
 * Stores the answer. Passing the write's own EntityManager commits the answer with the write, so a
 * process that dies before answering leaves a record a retry replays, not a second write.
 */
export async function completeIdempotencyKey(
  db: DataSource | EntityManager, claim: Omit<IdempotencyClaimRef, 'requestHash'>, statusCode: number, body: string,
): Promise<void> {
  await db.query(
    `UPDATE idempotency_records SET state = 'completed', status_code = $4, response_body = $5
      WHERE credential_id = $1 AND idempotency_key = $2 AND claim_token = $3`,
    [claim.credentialId, claim.key, claim.token, statusCode, body],
  );
}

/** Runs inside a write's transaction, after the write, with its result. */
export type AfterWrite = (em: EntityManager, result: unknown) => Promise<void>;

/**
 * A write's transaction that ends with `after` (an idempotent route storing its answer), so the answer
 * commits with the write it guards or not at all.
 */
export function transactionWith<T>(ds: DataSource, work: (em: EntityManager) => Promise<T>, after?: AfterWrite): Promise<T> {
  return ds.transaction(async (em) => {
    const result = await work(em);
    if (after) await after(em, result);
    return result;
  });
}

/** After an error the key is released, so a corrected retry may use it (spec, Idempotency rule 2). */
export async function releaseIdempotencyKey(ds: DataSource, claim: Omit<IdempotencyClaimRef, 'requestHash'>): Promise<void> {
  await ds.query(
    `DELETE FROM idempotency_records
      WHERE credential_id = $1 AND idempotency_key = $2 AND claim_token = $3 AND state = 'in_progress'`,
    [claim.credentialId, claim.key, claim.token],
  );
}
