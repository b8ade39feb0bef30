import { Client as PgClient } from 'pg';
import { INBOX_CHANNEL, InboxNotice } from '../../db/customer-loop/inbox';

export interface InboxSubscriber {
  onNotice: (notice: InboxNotice) => void;
  /** The LISTEN connection died: the stream must end so that its client resumes elsewhere. */
  onLost: () => void;
}

/** A notice as inbox.ts writes it, or null for anything else. */
export function parseInboxNotice(payload: string): InboxNotice | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  const v = value as Partial<InboxNotice> | null;
  if (!v || typeof v !== 'object' || typeof v.productId !== 'string' || typeof v.endUserId !== 'string') return null;
  if (v.itemId !== null && typeof v.itemId !== 'string') return null;
  return v as InboxNotice;
}

const keyOf = (productId: string, endUserId: string) => `${productId}\u0000${endUserId}`;

/**
 * One LISTEN connection per API process, shared by every open inbox stream. Items reach PostgreSQL's
 * channel from whichever process commits them, so a stream sees them whichever process holds it.
 */
export class InboxHub {
  private connection: Promise<PgClient> | null = null;
  /** The client behind `connection`: events of an earlier, ended client must not drop a newer one. */
  private current: PgClient | null = null;
  private readonly subscribers = new Map<string, Set<InboxSubscriber>>();

  constructor(private readonly databaseUrl: string) {}

  async subscribe(productId: string, endUserId: string, subscriber: InboxSubscriber): Promise<() => void> {
    await this.connect();
    const key = keyOf(productId, endUserId);
    let set = this.subscribers.get(key);
    if (!set) this.subscribers.set(key, (set = new Set()));
    set.add(subscriber);
    return () => {
      set.delete(subscriber);
      if (set.size === 0 && this.subscribers.get(key) === set) this.subscribers.delete(key);
    };
  }

  private connect(): Promise<PgClient> {
    if (!this.connection) {
      const client = new PgClient({ connectionString: this.databaseUrl });
      this.current = client;
      client.on('notification', (message) => {
        if (message.channel !== INBOX_CHANNEL || !message.payload) return;
        const notice = parseInboxNotice(message.payload);
        // Anyone with the database may NOTIFY this channel: a payload we did not write is dropped, never thrown.
        if (!notice) return;
        for (const subscriber of this.subscribers.get(keyOf(notice.productId, notice.endUserId)) ?? []) subscriber.onNotice(notice);
      });
      const lost = () => this.lose(client);
      client.on('error', lost);
      client.on('end', lost);
      this.connection = client.connect().then(async () => {
        await client.query(`LISTEN ${INBOX_CHANNEL}`);
        return client;
      }).catch((err) => {
        this.connection = null;
        throw err;
      });
    }
    return this.connection;
  }

  private lose(client: PgClient): void {
    if (!this.connection || client !== this.current) return;
    this.connection = null;
    this.current = null;
    client.end().catch(() => undefined);
    const all = [...this.subscribers.values()].flatMap((set) => [...set]);
    this.subscribers.clear();
    for (const subscriber of all) subscriber.onLost();
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    this.current = null;
    this.subscribers.clear();
    if (connection) await connection.then((c) => c.end()).catch(() => undefined);
  }
}
