import { DataSource } from 'typeorm';
import { ConsentTemplate, ConsentTemplateVersion } from '../entities';
import { ConsentTemplateTerms } from '../entities/consent-template-version';
import { newId } from '../rules/ids';
import { sha256Hex } from '../rules/secrets';
import { PageRequest } from '../pagination';
import { Teammate, assertOwnProduct, pageRows } from './scope';
import { dbNow } from '../clock';

export interface NewTemplateVersion {
  productId: string;
  name: string;
  wording: string;
  terms: ConsentTemplateTerms;
}

/** `sha256:` over the exact wording (UTF-8), so anyone holding the text can check what was agreed to. */
export function wordingHashOf(wording: string): string {
  return `sha256:${sha256Hex(Buffer.from(wording, 'utf8'))}`;
}

export function viewTemplateVersion(v: ConsentTemplateVersion) {
  return {
    id: v.id,
    templateId: v.templateId,
    productId: v.productId,
    name: v.name,
    version: v.version,
    wording: v.wording,
    wordingHash: v.wordingHash,
    terms: v.terms,
    createdAt: v.createdAt.toISOString(),
  };
}

/**
 * Publishes the next immutable version of the product's template of this name (version 1 when the
 * name is new). Earlier versions are never changed, so drafts pinned to them keep their wording.
 */
export async function publishTemplateVersion(ds: DataSource, who: Teammate, body: NewTemplateVersion) {
  return ds.transaction(async (em) => {
    await assertOwnProduct(em, who.organizationId, body.productId);
    const templates = em.getRepository(ConsentTemplate);
    await em.query(
      `INSERT INTO consent_templates (id, organization_id, product_id, name, latest_version)
       VALUES ($1, $2, $3, $4, 0) ON CONFLICT (product_id, name) DO NOTHING`,
      [newId('cst'), who.organizationId, body.productId, body.name],
    );
    const template = await templates.findOneOrFail({
      where: { productId: body.productId, name: body.name }, lock: { mode: 'pessimistic_write' },
    });
    const version = template.latestVersion + 1;
    const row: Partial<ConsentTemplateVersion> = {
      id: newId('ctv'),
      templateId: template.id,
      organizationId: who.organizationId,
      productId: body.productId,
      version,
      name: body.name,
      wording: body.wording,
      wordingHash: wordingHashOf(body.wording),
      terms: body.terms,
      publishedBy: who.teammateId,
    };
    await em.getRepository(ConsentTemplateVersion).insert(row);
    await templates.update({ id: template.id }, { latestVersion: version, updatedAt: dbNow });
    return viewTemplateVersion(await em.getRepository(ConsentTemplateVersion).findOneByOrFail({ id: row.id! }));
  });
}

export async function listTemplateVersions(ds: DataSource, organizationId: string, query: PageRequest & { productId?: string }) {
  const page = await pageRows(ds, ConsentTemplateVersion, organizationId, { product_id: query.productId }, query);
  return { data: page.data.map(viewTemplateVersion), nextCursor: page.nextCursor };
}
