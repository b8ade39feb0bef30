import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, notFound } from '../../runtime/service-error';
import { InboxItem } from '../entities';
import { newId } from '../rules/ids';
import { enqueueWorkflowCommand } from '../workflow-commands';
import type { ControlReach, Person } from './control';
import { ControlScope, issueSecret } from './secrets';

const DAY_MS = 86_400_000;

export interface ControlLinkSettings { pageUrl: string; controlTtlDays: number }

export interface IssuedControlLink { controlToken: string; controlUrl: string; controlExpiresAt: string }

export const controlLinkExpiry = (ttlDays: number) => new Date(Date.now() + ttlDays * DAY_MS);

/** A control secret of one scope; shown once by the caller, stored as its SHA-256. */
async function issueControlLink(
  em: EntityManager, person: Person, scope: ControlScope, proofItemId: string | null, pageUrl: string, expiresAt: Date,
): Promise<IssuedControlLink> {
  const controlToken = await issueSecret(em, 'control', { ...person, scope, proofItemId, expiresAt });
  return { controlToken, controlUrl: `${pageUrl}/control#${controlToken}`, controlExpiresAt: expiresAt.toISOString() };
}

/**
 * The link answered to a submission (submit, no-JS form, key-started session): whoever held the draft
 * session proved nothing about who the person is, so it reaches the story of that submission only.
 */
export async function issueStoryLink(em: EntityManager, person: Person, proofItemId: string, pageUrl: string, expiresAt: Date) {
  return issueControlLink(em, person, 'story', proofItemId, pageUrl, expiresAt);
}

/** All of one person's stories in one product: only ever minted for the person (their e-mail, their inbox). */
export async function issuePersonLink(em: EntityManager, person: Person, pageUrl: string, expiresAt: Date) {
  return issueControlLink(em, person, 'person', null, pageUrl, expiresAt);
}

/**
 * The person's stories told through a customer route (never a key's session, whose address and person
 * are the key's word), newest first: only their addresses and end users receive a person link.
 */
const OWN_STORIES = `
  FROM proof_items i JOIN collection_drafts d ON d.proof_item_id = i.id
 WHERE i.organization_id = $1 AND i.product_id = $2 AND i.customer_person_id = $3 AND i.status <> 'deleted' AND d.source <> 'key'`;

/**
 * The newest such story that gave this address (any case), or null. A personal request's recipient is a
 * teammate's word too: its story counts only where the person is named by that very address.
 */
export async function storyWithAddress(em: EntityManager | DataSource, person: Person, email: string): Promise<string | null> {
  const rows: Array<{ id: string }> = await em.query(
    `SELECT i.id ${OWN_STORIES} AND lower(i.customer_email) = lower($4)
        AND (d.source <> 'link' OR i.customer_person_id = 'email:' || lower(i.customer_email))
      ORDER BY i.created_at DESC, i.id DESC LIMIT 1`,
    [person.organizationId, person.productId, person.personRef, email]);
  return rows[0]?.id ?? null;
}

/**
 * The signed end user whose stories they are (the newest story's), or null. On a personal request's story
 * only an end user who is the person themselves counts (the recipient is a teammate's word).
 */
export async function endUserOfPerson(em: EntityManager | DataSource, person: Person): Promise<string | null> {
  const rows: Array<{ end_user_id: string }> = await em.query(
    `SELECT d.end_user_id ${OWN_STORIES} AND d.end_user_id IS NOT NULL AND (d.source <> 'link' OR i.customer_person_id = d.end_user_id)
      ORDER BY i.created_at DESC, i.id DESC LIMIT 1`,
    [person.organizationId, person.productId, person.personRef]);
  return rows[0]?.end_user_id ?? null;
}

/**
 * A customer who holds any control link asks for their person link by e-mail. Only an address of one
 * of the person's own stories is written to; any other address is silently dropped, so the answer
 * (always 202) tells nothing. The e-mail goes out through the delivery workflow, which mints the secret.
 */
export async function requestPersonLink(ds: DataSource, reach: ControlReach, email: string, settings: ControlLinkSettings): Promise<void> {
  await ds.transaction(async (em) => {
    const storyId = await storyWithAddress(em, reach, email);
    if (!storyId) return;
    await enqueueWorkflowCommand(em, {
      type: 'collection.approval_link.deliver', tenant: { organizationId: reach.organizationId, productId: reach.productId },
      deliveryId: newId('ald'), proofItemId: storyId, channel: 'email', reason: 'person_link',
      expiresAt: controlLinkExpiry(settings.controlTtlDays).toISOString(),
    });
  });
}

/** The signed end user redeems the person link their inbox item delivers; each redemption mints a new one. */
export async function redeemInboxPersonLink(
  ds: DataSource, who: { productId: string; endUserId: string }, inboxItemId: string, pageUrl: string,
): Promise<IssuedControlLink> {
  return ds.transaction(async (em) => {
    const item = await em.getRepository(InboxItem).findOneBy({ id: inboxItemId, productId: who.productId, endUserId: who.endUserId });
    if (!item || !item.controlPersonRef || !item.controlExpiresAt) throw notFound('inbox item with a control link');
    if (item.controlExpiresAt.getTime() <= Date.now()) throw new ServiceError('EXPIRED', 'this control link has expired; ask for a new one');
    const person = { organizationId: item.organizationId, productId: item.productId, personRef: item.controlPersonRef };
    return issuePersonLink(em, person, pageUrl, item.controlExpiresAt);
  });
}
