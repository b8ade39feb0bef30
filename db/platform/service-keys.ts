import { DataSource, EntityManager } from 'typeorm';
import { conflict, forbidden, notFound, validationFailed } from '../../runtime/service-error';
import { Environment, Organization, Product, ServiceKey } from '../entities';
import { newId } from '../rules/ids';
import { Page, PageRequest, pageOf } from '../pagination';
import { newSecret, sha256Hex } from '../rules/secrets';
import { databaseNow, dbNow } from '../clock';

export const KEY_SCOPES = [
  'service:proof:read', 'service:proof:read_private', 'service:proof:write', 'service:proof:publish',
  'service:proof:export', 'service:proof:submissions:write', 'service:signals:read', 'service:signals:write',
  'service:threads:read', 'service:threads:write', 'service:features:read', 'service:features:write',
  'service:inbox:read', 'service:rooms:read', 'service:rooms:write', 'service:sources:read',
] as const;
export const MAX_SCOPES = 5;
export const DEFAULT_KEY_DAYS = 180;
export const MAX_KEY_DAYS = 365;
export const SERVICE_KEY_PATTERN = /^svk_[A-Za-z0-9_-]{43}$/;
const DAY_MS = 86_400_000;

/** What may be shown about a key: never the key itself nor its digest. */
export interface ServiceKeyView {
  id: string;
  prefix: string;
  organizationId: string;
  productId: string | null;
  environment: string;
  scopes: string[];
  createdBy: string | null;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  rotatedFromId: string | null;
  replacedById: string | null;
}

export function viewServiceKey(key: ServiceKey): ServiceKeyView {
  return {
    id: key.id,
    prefix: key.prefix,
    organizationId: key.organizationId,
    productId: key.productId,
    environment: key.environment,
    scopes: key.scopes,
    createdBy: key.createdBy,
    createdAt: key.createdAt.toISOString(),
    expiresAt: key.expiresAt.toISOString(),
    revokedAt: key.revokedAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    rotatedFromId: key.rotatedFromId,
    replacedById: key.replacedById,
  };
}

export interface CreateKeyInput {
  organizationId: string;
  productId: string | null;
  environment: string;
  scopes: string[];
  expiresInDays?: number;
  createdBy?: string | null;
}

export interface IssuedKey {
  key: ServiceKeyView;
  /** The full key, shown this once. */
  secret: string;
}

function checkScopes(scopes: string[]): string[] {
  const unique = [...new Set(scopes)];
  const unknown = unique.filter((s) => !(KEY_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) {
    throw validationFailed([{ path: 'scopes', message: `unknown scope ${unknown.join(', ')}; allowed: ${KEY_SCOPES.join(', ')}` }]);
  }
  if (unique.length < 1 || unique.length > MAX_SCOPES) {
    throw validationFailed([{ path: 'scopes', message: `a key carries 1 to ${MAX_SCOPES} scopes` }]);
  }
  return unique;
}

async function insertKey(
  em: EntityManager, fields: Omit<ServiceKey, 'id' | 'digest' | 'prefix' | 'createdAt' | 'revokedAt' | 'lastUsedAt' | 'replacedById'>,
): Promise<IssuedKey> {
  const secret = newSecret('svk');
  const key = await em.getRepository(ServiceKey).save({
    ...fields,
    id: newId('key'),
    digest: sha256Hex(secret),
    prefix: secret.slice(0, 12),
    revokedAt: null,
    lastUsedAt: null,
    replacedById: null,
  });
  return { key: viewServiceKey(key), secret };
}

/** Issues a key; only sponsored workspaces may hold them (spec, Authentication 5). */
export async function createServiceKey(ds: DataSource, input: CreateKeyInput): Promise<IssuedKey> {
  const scopes = checkScopes(input.scopes);
  const days = input.expiresInDays ?? DEFAULT_KEY_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_KEY_DAYS) {
    throw validationFailed([{ path: 'expiresInDays', message: `must be a whole number from 1 to ${MAX_KEY_DAYS}` }]);
  }
  return ds.transaction(async (em) => {
    const org = await em.getRepository(Organization).findOneBy({ id: input.organizationId });
    if (!org) throw notFound('organization');
    if (!org.sponsored) throw forbidden('service keys are issued only to sponsored internal workspaces');
    if (input.productId !== null) {
      const product = await em.getRepository(Product).findOneBy({ id: input.productId, organizationId: org.id });
      if (!product) throw notFound('product');
      const env = await em.getRepository(Environment).findOneBy({ productId: product.id, name: input.environment });
      if (!env) throw validationFailed([{ path: 'environment', message: `the product has no environment "${input.environment}"` }]);
    } else if (!/^[a-z][a-z0-9-]{0,31}$/.test(input.environment)) {
      throw validationFailed([{ path: 'environment', message: 'must be a lower-case name such as production' }]);
    }
    return insertKey(em, {
      organizationId: org.id,
      productId: input.productId,
      environment: input.environment,
      scopes,
      createdBy: input.createdBy ?? null,
      expiresAt: new Date(Date.now() + days * DAY_MS),
      rotatedFromId: null,
    });
  });
}

async function lockKey(em: EntityManager, id: string, organizationId?: string): Promise<ServiceKey> {
  const key = await em.getRepository(ServiceKey).findOne({
    where: organizationId ? { id, organizationId } : { id },
    lock: { mode: 'pessimistic_write' },
  });
  if (!key) throw notFound('service key');
  return key;
}

/**
 * Replaces a key with a new one of the same organization, product, environment, scopes and lifetime;
 * the old key stops working at once.
 */
export async function rotateServiceKey(
  ds: DataSource, id: string, opts: { organizationId?: string; actor?: string | null } = {},
): Promise<IssuedKey> {
  return ds.transaction(async (em) => {
    const old = await lockKey(em, id, opts.organizationId);
    if (old.revokedAt) throw conflict('the key is revoked; issue a new key instead');
    if (old.expiresAt.getTime() <= Date.now()) throw conflict('the key has expired; issue a new key instead');
    const org = await em.getRepository(Organization).findOneByOrFail({ id: old.organizationId });
    if (!org.sponsored) throw forbidden('service keys are issued only to sponsored internal workspaces');
    const lifetime = Math.min(old.expiresAt.getTime() - old.createdAt.getTime(), MAX_KEY_DAYS * DAY_MS);
    const issued = await insertKey(em, {
      organizationId: old.organizationId,
      productId: old.productId,
      environment: old.environment,
      scopes: old.scopes,
      createdBy: opts.actor ?? old.createdBy,
      expiresAt: new Date(Date.now() + lifetime),
      rotatedFromId: old.id,
    });
    await em.getRepository(ServiceKey).update(old.id, { revokedAt: dbNow, replacedById: issued.key.id });
    return issued;
  });
}

/** Revokes a key; revoking a revoked key changes nothing. */
export async function revokeServiceKey(
  ds: DataSource, id: string, opts: { organizationId?: string } = {},
): Promise<ServiceKeyView> {
  return ds.transaction(async (em) => {
    const key = await lockKey(em, id, opts.organizationId);
    if (!key.revokedAt) {
      key.revokedAt = await databaseNow(em);
      await em.getRepository(ServiceKey).update(key.id, { revokedAt: key.revokedAt });
    }
    return viewServiceKey(key);
  });
}

export async function listServiceKeys(
  ds: DataSource, organizationId: string, page: PageRequest,
): Promise<Page<ServiceKeyView>> {
  const qb = ds.getRepository(ServiceKey).createQueryBuilder('k')
    .where('k.organization_id = :organizationId', { organizationId });
  return pageOf(qb, 'k', page, viewServiceKey);
}
