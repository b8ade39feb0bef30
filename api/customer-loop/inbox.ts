import { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { FastifyRequest } from 'fastify';
import { array, number, string } from 'yup';
import { InboxItem } from '../../db/entities';
import {
  EndUserRef, InboxNotice, lookupInboxItem, inboxItemsAfter, inboxPage, markInboxRead, unreadCount, viewInboxItem,
} from '../../db/customer-loop/inbox';
import { encodeCursor } from '../../db/pagination';
import { validationFailed } from '../../runtime/service-error';
import type { AppDeps } from '../app-deps';
import { InboxHub } from './inbox-hub';
import { InboxStreamSlots } from './inbox-streams';
import { endUserOf, productTenant } from '../plugins/product-tenant';
import { RouteApp, strictObject } from '../plugins/validation';
import { dataOf, errorOf, fileOf } from '../plugins/responses';
import { inboxPageSchema, inboxReadSchema } from './schemas';

export const MAX_INBOX_READ_IDS = 200;

const pageQuery = strictObject({
  endUserId: string().min(1).max(200).meta({ description: 'required with a key; with a token it is the token\'s end user' }),
  limit: number().integer().min(1).max(100).default(50),
  before: string().max(200),
});

// No body at all (Fastify hands over null) marks everything read, as does a body without ids.
const readBody = strictObject({ ids: array(string().required().max(100)).max(MAX_INBOX_READ_IDS) }).nullable();

const RESUME_LIMIT = 100;
const RECONNECT_MS = 3_000;

/** Whose inbox: a key names the end user in the query; a token is the end user. */
function inboxOwner(request: FastifyRequest, endUserId: string | undefined): EndUserRef {
  const tenant = productTenant(request);
  if (request.principal?.kind === 'identity') {
    const own = request.principal.endUserId;
    if (endUserId !== undefined && endUserId !== own) {
      throw validationFailed([{ path: 'endUserId', message: 'must be the token\'s own end user, or left out' }]);
    }
    return { productId: tenant.productId, endUserId: own };
  }
  if (endUserId === undefined) throw validationFailed([{ path: 'endUserId', message: 'is required with a service key' }]);
  return { productId: tenant.productId, endUserId };
}

function sse(raw: ServerResponse, event: string, data: unknown, id?: string): void {
  raw.write(`${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** The in-app inbox: a page by polling, marking read, and a live stream fed by PostgreSQL LISTEN/NOTIFY. */
export async function inboxRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  const ds = deps.dataSource;
  const hub = new InboxHub((ds.options as { url: string }).url);
  const slots = new InboxStreamSlots(ds, {
    perEndUser: deps.config.inboxStreamsPerEndUser, perProcess: deps.config.inboxStreamsPerProcess,
  }, app.log);
  const streams = new Set<(stopping?: boolean) => void>();
  app.addHook('preClose', async () => {
    // The process is stopping: each stream is told when to reconnect (to another process) and ended.
    for (const end of [...streams]) end(true);
  });
  app.addHook('onClose', async () => {
    await slots.close();
    await hub.close();
  });

  app.get('/api/v1/inbox', {
    schema: { querystring: pageQuery, response: { 200: dataOf(inboxPageSchema) } },
    config: { tag: 'customer-loop', auth: 'key-or-identity', scope: 'service:inbox:read', endUserWindow: true, operationId: 'getInbox',
      summary: 'An end user\'s inbox, newest first, with the unread count' },
  }, async (request) => {
    const { endUserId, limit, before } = request.query;
    return { data: await inboxPage(ds, inboxOwner(request, endUserId), { limit, before }) };
  });

  app.post('/api/v1/inbox/read', {
    schema: { body: readBody, response: { 200: dataOf(inboxReadSchema) } },
    config: { tag: 'customer-loop', auth: 'identity', operationId: 'markInboxRead', summary: 'Mark the given items (or everything) read' },
  }, async (request) => {
    const me = endUserOf(request);
    return { data: await markInboxRead(ds, me, request.body?.ids) };
  });

  app.get('/api/v1/inbox/stream', {
    schema: {
      response: {
        200: fileOf('text/event-stream', 'events `ready` {endUserId, unread}, `item` (an InboxItem, id = resume cursor), `unread` {unread}'),
        429: errorOf('RATE_LIMITED: the end user\'s requests this minute (RATE_LIMIT_PER_MINUTE), or its open streams (SV_INBOX_STREAMS_PER_END_USER, ' +
          'details.reason inbox_streams_per_end_user)', { retryAfter: true }),
        503: errorOf('SERVICE_UNAVAILABLE: this API process holds its most streams (SV_INBOX_STREAMS_PER_PROCESS, details.reason inbox_streams_per_process), ' +
          'or a dependency is unavailable', { retryAfter: true }),
      },
    },
    config: { tag: 'customer-loop', auth: 'identity', endUserWindow: true, operationId: 'streamInbox',
      summary: 'Server-sent events: ready, item, unread; resumes from Last-Event-ID' },
  }, async (request, reply) => {
    const me = endUserOf(request);
    const lastEventId = request.headers['last-event-id'];
    // Refused in the envelope before the answer becomes a stream.
    const release = await slots.take(me);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      // The rate window's x-ratelimit-* headers, set while the open was counted.
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': request.id,
    });
    const sent = new Set<string>();
    // Notices wait behind this gate until `ready` and the missed items are out, keeping the order.
    let openGate = () => {};
    let queue = new Promise<void>((resolve) => {
      openGate = resolve;
    });
    let open = true;
    const timers: NodeJS.Timeout[] = [];
    let unsubscribe = () => {};
    const end = (stopping = false) => {
      if (!open) return;
      open = false;
      if (stopping && !raw.destroyed) raw.write(`retry: ${RECONNECT_MS}\n: the server is stopping; reconnect\n\n`);
      streams.delete(end);
      release();
      unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      raw.end();
    };
    streams.add(end);
    raw.on('close', () => end());
    // A client gone while its slot was being taken frees it at once.
    if (raw.destroyed) end();
    const fail = (err: unknown) => {
      request.log.warn({ err }, 'inbox stream ended');
      end();
    };
    const run = (step: () => Promise<void>) => {
      queue = queue.then(() => (open ? step() : undefined)).catch(fail);
    };
    const sendLoaded = (item: InboxItem) => {
      if (sent.has(item.id) || !open) return;
      sent.add(item.id);
      sse(raw, 'item', viewInboxItem(item), encodeCursor(item));
    };
    const sendItem = async (itemId: string) => {
      if (sent.has(itemId)) return;
      const item = await lookupInboxItem(ds, me, itemId);
      if (item) sendLoaded(item);
    };
    const sendUnread = async () => {
      const unread = await unreadCount(ds, me);
      if (open) sse(raw, 'unread', { unread });
    };
    try {
      // Subscribe before reading the backlog so that nothing committed in between is missed.
      const stop = await hub.subscribe(me.productId, me.endUserId, {
        onNotice: (notice: InboxNotice) => run(async () => {
          if (notice.itemId) await sendItem(notice.itemId);
          await sendUnread();
        }),
        onLost: () => end(),
      });
      unsubscribe = stop;
      if (!open) {
        stop();
        return;
      }
      raw.write(`retry: ${RECONNECT_MS}\n\n`);
      sse(raw, 'ready', { endUserId: me.endUserId, unread: await unreadCount(ds, me) });
      if (typeof lastEventId === 'string' && lastEventId.length > 0) {
        const missed = await inboxItemsAfter(ds, me, lastEventId, RESUME_LIMIT);
        for (const item of missed) sendLoaded(item);
        if (missed.length > 0) await sendUnread();
      }
    } catch (err) {
      fail(err);
      return;
    } finally {
      openGate();
    }
    if (!open) return;
    timers.push(setInterval(() => {
      if (open) raw.write(': heartbeat\n\n');
    }, deps.config.inboxHeartbeatMs));
    // The token's lifetime bounds the stream; the client reconnects with a fresh token and Last-Event-ID.
    timers.push(setTimeout(() => end(), Math.max(0, me.expiresAt.getTime() - Date.now())));
  });
}
