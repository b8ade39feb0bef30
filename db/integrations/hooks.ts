import { DataSource } from 'typeorm';
import { assertOwnProduct } from '../collection/scope';
import { ProofHook } from '../entities';
import { Page, PageRequest, pageOf } from '../pagination';
import { newId } from '../rules/ids';
import { newSecret, sha256Hex } from '../rules/secrets';
import { conflict, notFound } from '../../runtime/service-error';
import { databaseNow } from '../clock';

export const HOOK_SOURCES = ['zapier', 'make', 'n8n', 'zendesk', 'intercom', 'freshdesk', 'generic'] as const;
export const HOOK_TOKEN_PATTERN = /^svhk_[A-Za-z0-9_-]{43}$/;

export function viewHook(row: ProofHook) {
  return {
    id: row.id,
    productId: row.productId,
    name: row.name,
    source: row.source,
    state: row.state,
    tokenPrefix: row.tokenPrefix,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
  };
}

/** A new URL token: shown once; only its SHA-256 digest and first 9 characters are kept. */
export function issueUrlToken(): { token: string; digest: string; prefix: string } {
  const token = newSecret('svhk');
  return { token, digest: sha256Hex(token), prefix: token.slice(0, 9) };
}

export async function createHook(
  ds: DataSource, organizationId: string, teammateId: string, input: { productId: string; name: string; source: string },
) {
  await assertOwnProduct(ds, organizationId, input.productId);
  const { token, digest, prefix } = issueUrlToken();
  const repo = ds.getRepository(ProofHook);
  const row = await repo.save(repo.create({
    id: newId('hk'), organizationId, productId: input.productId, name: input.name, source: input.source, state: 'active',
    tokenDigest: digest, tokenPrefix: prefix, createdBy: teammateId, lastUsedAt: null, disabledAt: null,
  }));
  return { hook: viewHook(row), token };
}

export async function listHooks(ds: DataSource, organizationId: string, page: PageRequest): Promise<Page<ReturnType<typeof viewHook>>> {
  const qb = ds.getRepository(ProofHook).createQueryBuilder('h').where('h.organization_id = :organizationId', { organizationId });
  return pageOf(qb, 'h', page, viewHook);
}

async function ownHook(ds: DataSource, organizationId: string, id: string): Promise<ProofHook> {
  const row = await ds.getRepository(ProofHook).findOneBy({ id, organizationId });
  if (!row) throw notFound('hook');
  return row;
}

/** The old token stops at once: its digest is replaced in the same row. */
export async function rotateHook(ds: DataSource, organizationId: string, id: string) {
  const row = await ownHook(ds, organizationId, id);
  if (row.state !== 'active') throw conflict('a disabled hook cannot be rotated');
  const { token, digest, prefix } = issueUrlToken();
  row.tokenDigest = digest;
  row.tokenPrefix = prefix;
  return { hook: viewHook(await ds.getRepository(ProofHook).save(row)), token };
}

/** Disabled for good; the row stays as history. */
export async function disableHook(ds: DataSource, organizationId: string, id: string) {
  const row = await ownHook(ds, organizationId, id);
  if (row.state === 'active') {
    row.state = 'disabled';
    row.disabledAt = await databaseNow(ds);
    await ds.getRepository(ProofHook).save(row);
  }
  return viewHook(row);
}

export interface ResolvedHook {
  id: string;
  organizationId: string;
  productId: string;
}

/** The active hook of an active product that a token names, marked as used; null for every other token. */
export async function resolveHookToken(ds: DataSource, token: string): Promise<ResolvedHook | null> {
  if (!HOOK_TOKEN_PATTERN.test(token)) return null;
  const rows: Array<Record<string, any>> = await ds.query(
    `WITH h AS (
       SELECT h.id, h.organization_id, h.product_id FROM proof_hooks h JOIN products p ON p.id = h.product_id
        WHERE h.token_digest = $1 AND h.state = 'active' AND p.active
     ), touched AS (
       UPDATE proof_hooks SET last_used_at = now() WHERE id IN (SELECT id FROM h)
     )
     SELECT h.* FROM h`,
    [sha256Hex(token)],
  );
  const row = rows[0];
  if (!row) return null;
  return { id: row.id, organizationId: row.organization_id, productId: row.product_id };
}
