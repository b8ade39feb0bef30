import { DataSource, EntityManager } from 'typeorm';
import { validationFailed } from '../../runtime/service-error';
import { InboxItem } from '../entities';
import { decodeCursor, encodeCursor } from '../pagination';

/** PostgreSQL channel that carries inbox changes to every API process holding a stream. */
export const INBOX_CHANNEL = 'sv_inbox';

export interface InboxNotice {
  productId: string;
  endUserId: string;
  /** The new item, or null when only the unread count changed. */
  itemId: string | null;
}

export interface InboxItemView {
  id: string;
  threadId: string | null;
  releaseId: string | null;
  roomId: string | null;
  /** When the item delivers a person link: until when the end user may redeem it. */
  controlLinkExpiresAt: string | null;
  subject: string;
  preview: string;
  createdAt: string;
  readAt: string | null;
}

export const PREVIEW_LENGTH = 160;

export function previewOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > PREVIEW_LENGTH ? `${flat.slice(0, PREVIEW_LENGTH - 1)}…` : flat;
}

export function viewInboxItem(item: InboxItem): InboxItemView {
  return {
    id: item.id,
    threadId: item.threadId,
    releaseId: item.releaseId,
    roomId: item.roomId,
    controlLinkExpiresAt: item.controlExpiresAt?.toISOString() ?? null,
    subject: item.subject,
    preview: item.preview,
    createdAt: item.createdAt.toISOString(),
    readAt: item.readAt ? item.readAt.toISOString() : null,
  };
}

/** Announces a change at commit (NOTIFY is transactional), so streams never see rolled-back items. */
export async function notifyInbox(em: EntityManager | DataSource, notice: InboxNotice): Promise<void> {
  await em.query('SELECT pg_notify($1, $2)', [INBOX_CHANNEL, JSON.stringify(notice)]);
}

/** What every item of one fan-out says; `roomId` names the room of a room's release receipt. */
export interface FannedItem {
  organizationId: string;
  productId: string;
  releaseId: string;
  roomId: string | null;
  subject: string;
  preview: string;
}

/**
 * One inbox item for each end user that `recipients` selects (SQL with an `end_user_id` column; $3 is
 * the release, $4 the room, `params` follow from $8), and each recipient's notice, delivered by
 * PostgreSQL at commit to every API process holding their stream: one statement for any number of
 * recipients. A recipient whose item a unique index already holds gets none. Answers how many were
 * written.
 */
export async function fanOutInboxItems(em: EntityManager, item: FannedItem, recipients: string, params: unknown[] = []): Promise<number> {
  const sent: unknown[] = await em.query(
    `WITH items AS (
       INSERT INTO inbox_items (id, organization_id, product_id, end_user_id, release_id, room_id, subject, preview)
       SELECT 'inb_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, r.end_user_id, $3, $4, $5, $6
         FROM (${recipients}) r
       ON CONFLICT DO NOTHING
       RETURNING id, end_user_id
     )
     SELECT id, pg_notify($7, json_build_object('productId', $2::text, 'endUserId', end_user_id, 'itemId', id)::text) FROM items`,
    [item.organizationId, item.productId, item.releaseId, item.roomId, item.subject, item.preview, INBOX_CHANNEL, ...params],
  );
  return sent.length;
}

export interface EndUserRef {
  productId: string;
  endUserId: string;
}

export async function unreadCount(ds: DataSource | EntityManager, who: EndUserRef): Promise<number> {
  const rows: Array<{ n: number }> = await ds.query(
    `SELECT count(*)::int AS n FROM inbox_items WHERE product_id = $1 AND end_user_id = $2 AND read_at IS NULL`,
    [who.productId, who.endUserId],
  );
  return rows[0].n;
}

export interface InboxPage {
  unread: number;
  nextCursor: string | null;
  items: InboxItemView[];
}

/** Newest first; `before` is the previous page's nextCursor. */
export async function inboxPage(ds: DataSource, who: EndUserRef, page: { limit: number; before?: string }): Promise<InboxPage> {
  const qb = ds.getRepository(InboxItem).createQueryBuilder('i')
    .where('i.product_id = :productId AND i.end_user_id = :endUserId', who);
  if (page.before) {
    let position;
    try {
      position = decodeCursor(page.before);
    } catch {
      throw validationFailed([{ path: 'before', message: 'is not a cursor this service issued' }]);
    }
    qb.andWhere('(i.created_at, i.id) < (:t, :id)', { t: position.createdAt, id: position.id });
  }
  const rows = await qb.orderBy('i.created_at', 'DESC').addOrderBy('i.id', 'DESC').take(page.limit + 1).getMany();
  const more = rows.length > page.limit;
  const items = more ? rows.slice(0, page.limit) : rows;
  return {
    unread: await unreadCount(ds, who),
    nextCursor: more ? encodeCursor(items[items.length - 1]) : null,
    items: items.map(viewInboxItem),
  };
}

/** Items created after a stream event id (the item's cursor), oldest first, for Last-Event-ID resume. */
export async function inboxItemsAfter(ds: DataSource, who: EndUserRef, eventId: string, limit: number): Promise<InboxItem[]> {
  let position;
  try {
    position = decodeCursor(eventId);
  } catch {
    return [];
  }
  return ds.getRepository(InboxItem).createQueryBuilder('i')
    .where('i.product_id = :productId AND i.end_user_id = :endUserId', who)
    .andWhere('(i.created_at, i.id) > (:t, :id)', { t: position.createdAt, id: position.id })
    .orderBy('i.created_at', 'ASC').addOrderBy('i.id', 'ASC').take(limit).getMany();
}

export async function lookupInboxItem(ds: DataSource, who: EndUserRef, id: string): Promise<InboxItem | null> {
  return ds.getRepository(InboxItem).findOneBy({ id, productId: who.productId, endUserId: who.endUserId });
}

/** Marks the given items (or all) read; answers how many changed and what stays unread. */
export async function markInboxRead(ds: DataSource, who: EndUserRef, ids: string[] | undefined) {
  return ds.transaction(async (em) => {
    // TypeORM answers an UPDATE as [rows, count].
    const [rows]: [unknown[], number] = await em.query(
      `UPDATE inbox_items SET read_at = now()
        WHERE product_id = $1 AND end_user_id = $2 AND read_at IS NULL AND ($3::text[] IS NULL OR id = ANY($3))
        RETURNING id`,
      [who.productId, who.endUserId, ids ?? null],
    );
    if (rows.length > 0) await notifyInbox(em, { ...who, itemId: null });
    return { unread: await unreadCount(em, who), marked: rows.length };
  });
}

export interface NewInboxItem {
  organizationId: string;
  productId: string;
  endUserId: string;
  threadId?: string | null;
  releaseId?: string | null;
  /** A person link the end user redeems (the secret is minted then, never stored here). */
  control?: { personRef: string; expiresAt: Date };
  subject: string;
  preview: string;
  id: string;
}

export async function insertInboxItem(em: EntityManager, item: NewInboxItem): Promise<void> {
  await em.query(
    `INSERT INTO inbox_items (id, organization_id, product_id, end_user_id, thread_id, release_id, subject, preview, control_person_ref, control_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [item.id, item.organizationId, item.productId, item.endUserId, item.threadId ?? null, item.releaseId ?? null,
      item.subject, previewOf(item.preview), item.control?.personRef ?? null, item.control?.expiresAt ?? null],
  );
  await notifyInbox(em, { productId: item.productId, endUserId: item.endUserId, itemId: item.id });
}
