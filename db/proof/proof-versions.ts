import { DataSource } from 'typeorm';
import { AfterWrite, transactionWith } from '../platform/idempotency';
import { validationFailed } from '../../runtime/service-error';
import { ProofItem, ProofVersion } from '../entities';
import { ProofContent } from '../entities/proof-version';
import { newId } from '../rules/ids';
import { semanticDiff } from '../rules/proof-semantic-diff';
import { assertChangeable, contentHash, findItem, viewVersion } from './proof-items';
import { Actor, appendProofEvent } from './proof-ledger';
import { dbNow } from '../clock';

/** Oldest first; without proof:read_private only approved versions are listed (unapproved are omitted). */
export async function listVersions(
  ds: DataSource, scope: { organizationId: string; productId: string }, id: string, includePrivate: boolean,
) {
  await findItem(ds.manager, scope, id);
  const qb = ds.getRepository(ProofVersion).createQueryBuilder('v').where('v.proof_item_id = :id', { id });
  if (!includePrivate) qb.andWhere(`v.approval_state = 'approved'`);
  const rows = await qb.orderBy('v.version_number', 'ASC').getMany();
  return { data: rows.map(viewVersion), nextCursor: null };
}

export interface NewVersion {
  content: ProofContent;
  changeReason: string;
  parentVersionId?: string;
  modelId?: string;
  locale?: string;
}

/** A draft derivative; the parent (by default the latest version) is never touched. */
export async function createVersion(
  ds: DataSource, scope: { organizationId: string; productId: string }, id: string, input: NewVersion, actor: Actor, after?: AfterWrite,
) {
  return transactionWith(ds, async (em) => {
    const item = await findItem(em, scope, id, true);
    assertChangeable(item);
    const versions = em.getRepository(ProofVersion);
    const latest = await versions.findOneOrFail({ where: { proofItemId: id }, order: { versionNumber: 'DESC' } });
    let parent = latest;
    if (input.parentVersionId) {
      const found = await versions.findOneBy({ id: input.parentVersionId, proofItemId: id });
      if (!found) throw validationFailed([{ path: 'parentVersionId', message: 'is not a version of this item' }]);
      parent = found;
    }
    const version = versions.create({
      id: newId('pver'),
      proofItemId: id,
      versionNumber: latest.versionNumber + 1,
      isOriginal: false,
      content: input.content,
      contentHash: contentHash(input.content),
      createdByType: actor.type,
      createdById: actor.id,
      modelId: input.modelId ?? null,
      changeReason: input.changeReason,
      parentVersionId: parent.id,
      locale: input.locale ?? null,
      semanticDiff: { parentVersionId: parent.id, ...semanticDiff(parent.content, input.content) },
      approvalState: 'draft',
    });
    await versions.save(version);
    await em.getRepository(ProofItem).update(id, { updatedAt: dbNow });
    await appendProofEvent(em, {
      organizationId: item.organizationId, productId: item.productId, proofItemId: id, actor,
      eventType: 'proof.version.created', properties: { versionId: version.id, versionNumber: version.versionNumber },
    });
    return viewVersion(await versions.findOneByOrFail({ id: version.id }));
  }, after);
}
