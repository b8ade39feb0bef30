import { DataSource, EntityManager } from 'typeorm';
import { newSecret, sha256Hex } from '../rules/secrets';

export type SecretKind = 'draft_session' | 'continuation' | 'control' | 'upload' | 'interview';

export const SECRET_PREFIX: Record<SecretKind, string> = { draft_session: 'ds', continuation: 'cl', control: 'ct', upload: 'ut', interview: 'iv' };

/** A prefix and 43 base64url characters: anything else is refused before any lookup. */
export const secretPattern = (prefix: string) => new RegExp(`^${prefix}_[A-Za-z0-9_-]{43}$`);
/** Any customer secret, wherever it appears (a query string must never carry one). */
export const ANY_CUSTOMER_SECRET = /(^|[^A-Za-z0-9])(ds|pr|cl|ct|ut|iv)_[A-Za-z0-9_-]{43}/;

/** What a control secret reaches (docs/collection.md#story-links-and-person-links): its own submission's story, or one person's stories. */
export type ControlScope = 'story' | 'person';

export interface SecretRow {
  digest: string;
  kind: SecretKind;
  organizationId: string;
  productId: string;
  draftId: string | null;
  uploadId: string | null;
  interviewId: string | null;
  personRef: string | null;
  scope: ControlScope | null;
  proofItemId: string | null;
  expiresAt: Date | null;
  usedAt: Date | null;
}

export interface SecretBinding {
  organizationId: string;
  productId: string;
  draftId?: string | null;
  uploadId?: string | null;
  interviewId?: string | null;
  personRef?: string | null;
  scope?: ControlScope | null;
  proofItemId?: string | null;
  expiresAt?: Date | null;
}

/** Issues a secret in the caller's transaction; only its SHA-256 is stored. Shown once by the caller. */
export async function issueSecret(em: EntityManager, kind: SecretKind, binding: SecretBinding): Promise<string> {
  const secret = newSecret(SECRET_PREFIX[kind]);
  await em.query(
    `INSERT INTO collection_secrets (digest, kind, organization_id, product_id, draft_id, upload_id, interview_id, person_ref, scope, proof_item_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [sha256Hex(secret), kind, binding.organizationId, binding.productId, binding.draftId ?? null, binding.uploadId ?? null,
      binding.interviewId ?? null, binding.personRef ?? null, binding.scope ?? null, binding.proofItemId ?? null, binding.expiresAt ?? null],
  );
  return secret;
}

const toRow = (r: Record<string, unknown>): SecretRow => ({
  digest: r.digest as string,
  kind: r.kind as SecretKind,
  organizationId: r.organization_id as string,
  productId: r.product_id as string,
  draftId: r.draft_id as string | null,
  uploadId: r.upload_id as string | null,
  interviewId: r.interview_id as string | null,
  personRef: r.person_ref as string | null,
  scope: r.scope as ControlScope | null,
  proofItemId: r.proof_item_id as string | null,
  expiresAt: r.expires_at as Date | null,
  usedAt: r.used_at as Date | null,
});

export async function lookupSecret(ds: DataSource | EntityManager, kind: SecretKind, secret: string): Promise<SecretRow | null> {
  const rows: Array<Record<string, unknown>> = await ds.query(
    `SELECT * FROM collection_secrets WHERE digest = $1 AND kind = $2`, [sha256Hex(secret), kind]);
  return rows.length ? toRow(rows[0]) : null;
}

/** Marks a single-use secret used; false when another request used it first. */
export async function useSecret(em: EntityManager, digest: string): Promise<boolean> {
  const [, count] = (await em.query(
    `UPDATE collection_secrets SET used_at = now() WHERE digest = $1 AND used_at IS NULL`, [digest])) as [unknown, number];
  return count === 1;
}
