import assert from 'node:assert/strict';
import { InboxHub, parseInboxNotice } from '../../api/customer-loop/inbox-hub';
import { INBOX_CHANNEL, InboxNotice } from '../../db/customer-loop/inbox';
import { eventually } from '../support/fixtures';
import { ctx } from '../support/root-hooks';

describe('inbox LISTEN/NOTIFY payloads', () => {
  it('parses only notices as inbox.ts writes them', () => {
    assert.deepEqual(parseInboxNotice('{"productId":"p","endUserId":"u","itemId":null}'), { productId: 'p', endUserId: 'u', itemId: null });
    for (const bad of ['', 'not json', '{', 'null', '42', '[]', '{"productId":1,"endUserId":"u","itemId":null}', '{"productId":"p","itemId":null}',
      '{"productId":"p","endUserId":"u","itemId":7}']) {
      assert.equal(parseInboxNotice(bad), null, bad);
    }
  });

  it('a malformed NOTIFY is dropped; the hub keeps delivering the next good one', async () => {
    const hub = new InboxHub(ctx.databaseUrl);
    const seen: InboxNotice[] = [];
    let lost = false;
    const unsubscribe = await hub.subscribe('prd_hub', 'user-hub', { onNotice: (n) => seen.push(n), onLost: () => { lost = true; } });
    try {
      await ctx.dataSource.query('SELECT pg_notify($1, $2)', [INBOX_CHANNEL, '{not json']);
      await ctx.dataSource.query('SELECT pg_notify($1, $2)', [INBOX_CHANNEL, '{"productId":"prd_hub"}']);
      await ctx.dataSource.query('SELECT pg_notify($1, $2)', [INBOX_CHANNEL, JSON.stringify({ productId: 'prd_hub', endUserId: 'user-hub', itemId: 'inb_1' })]);
      // Notifications arrive in order on one connection: the good one arriving means the bad ones were handled.
      await eventually(async () => seen.length === 1);
      assert.deepEqual(seen, [{ productId: 'prd_hub', endUserId: 'user-hub', itemId: 'inb_1' }]);
      assert.equal(lost, false);
    } finally {
      unsubscribe();
      await hub.close();
    }
  });
});
