import { DataSource } from 'typeorm';
import { conflict, notFound, validationFailed } from '../../runtime/service-error';
import { Environment, Organization, Product, Teammate } from '../entities';
import { TEAMMATE_ROLES, TeammateRole } from '../entities/teammate';
import { newId } from '../rules/ids';
import { newSecret } from '../rules/secrets';

export const DEFAULT_ENVIRONMENTS = ['production', 'staging', 'development'];
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}\.[^\s@]{1,63}$/;

function checkName(name: string, field: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1 || trimmed.length > 200) {
    throw validationFailed([{ path: field, message: 'must be 1 to 200 characters' }]);
  }
  return trimmed;
}

export async function createOrganization(
  ds: DataSource, input: { name: string; sponsored?: boolean },
): Promise<Organization> {
  return ds.getRepository(Organization).save({
    id: newId('org'), name: checkName(input.name, 'name'), sponsored: input.sponsored ?? false,
  });
}

export async function getOrganization(ds: DataSource, id: string): Promise<Organization> {
  const org = await ds.getRepository(Organization).findOneBy({ id });
  if (!org) throw notFound('organization');
  return org;
}

/** A product with its identity signing key and the default environments. */
export async function createProduct(
  ds: DataSource, input: { organizationId: string; name: string },
): Promise<Product> {
  const name = checkName(input.name, 'name');
  return ds.transaction(async (em) => {
    if (!(await em.getRepository(Organization).existsBy({ id: input.organizationId }))) throw notFound('organization');
    const product = await em.getRepository(Product).save({
      id: newId('prd'),
      organizationId: input.organizationId,
      name,
      active: true,
      identityKeyId: newId('idk'),
      identitySecret: newSecret('idsec'),
    });
    await em.getRepository(Environment).insert(
      DEFAULT_ENVIRONMENTS.map((env) => ({ id: newId('env'), productId: product.id, name: env })),
    );
    return product;
  });
}

export async function getProduct(ds: DataSource, id: string): Promise<Product> {
  const product = await ds.getRepository(Product).findOneBy({ id });
  if (!product) throw notFound('product');
  return product;
}

export async function setProductActive(ds: DataSource, id: string, active: boolean): Promise<Product> {
  const product = await getProduct(ds, id);
  product.active = active;
  return ds.getRepository(Product).save(product);
}

export async function productEnvironments(ds: DataSource, productId: string): Promise<string[]> {
  const rows = await ds.getRepository(Environment).find({ where: { productId }, order: { name: 'ASC' } });
  return rows.map((row) => row.name);
}

export async function createTeammate(
  ds: DataSource, input: { organizationId: string; email: string; role: string },
): Promise<Teammate> {
  const email = input.email.trim();
  if (!EMAIL.test(email)) throw validationFailed([{ path: 'email', message: 'must be an email address' }]);
  if (!TEAMMATE_ROLES.includes(input.role as TeammateRole)) {
    throw validationFailed([{ path: 'role', message: `must be one of ${TEAMMATE_ROLES.join(', ')}` }]);
  }
  await getOrganization(ds, input.organizationId);
  const repo = ds.getRepository(Teammate);
  const taken = await repo.createQueryBuilder('t')
    .where('t.organization_id = :org AND lower(t.email) = lower(:email)', { org: input.organizationId, email })
    .getExists();
  if (taken) throw conflict('a teammate with this email already belongs to the organization');
  return repo.save({ id: newId('tm'), organizationId: input.organizationId, email, role: input.role as TeammateRole });
}
