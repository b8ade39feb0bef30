import { FastifyInstance, FastifyRequest } from 'fastify';
import { RoomCaller, endUserCaller } from '../../db/rooms/room-access';

const ROOMS_VERSION = '1.5';

/** The key scopes of the Rooms API. */
export const READ = 'service:rooms:read';
export const WRITE = 'service:rooms:write';

/** The paths of the Rooms contract (docs/rooms.md#paths); the tests check every route on them declares ROOMS_ROUTE. */
export const ROOMS_PATHS = /^\/api\/(v1\/(rooms|agent-runs|approvals)|workspace\/rooms)(\/|$)/;

/**
 * Route options every Rooms route spreads into its config: its OpenAPI tag, and end users rate-limited as keys are (docs/rooms.md#credentials-and-refusals).
 */
export const ROOMS_ROUTE = { tag: 'rooms', endUserWindow: true } as const;

/** The caller of a Rooms route in db/rooms terms: an end user (a customer), a key or a teammate. */
export function roomCaller(request: FastifyRequest): RoomCaller {
  const p = request.principal;
  if (p?.kind === 'identity') return endUserCaller(p);
  if (p?.kind === 'key' && p.productId !== null) return { kind: 'key', organizationId: p.organizationId, productId: p.productId, keyId: p.id };
  if (p?.kind === 'session') return { kind: 'teammate', organizationId: p.organizationId, teammateId: p.teammateId };
  throw new Error('route is not authenticated for Rooms');
}

export function productCaller(request: FastifyRequest): RoomCaller & { productId: string } {
  const caller = roomCaller(request);
  if (caller.kind === 'teammate') throw new Error('route is not product-authenticated');
  return caller;
}

export function endUserOnly(request: FastifyRequest) {
  const caller = roomCaller(request);
  if (caller.kind !== 'end_user') throw new Error('route is not identity-authenticated');
  return caller;
}

export function keyOnly(request: FastifyRequest) {
  const caller = roomCaller(request);
  if (caller.kind !== 'key') throw new Error('route is not key-authenticated');
  return caller;
}

/** Every answer of the Rooms contract names its version (docs/rooms.md). */
export function addRoomsVersionHeader(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('service-rooms-version', ROOMS_VERSION);
    return payload;
  });
}
