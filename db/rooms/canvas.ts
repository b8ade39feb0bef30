import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, notFound } from '../../runtime/service-error';
import { Room, RoomCanvasVersion } from '../entities';
import { Actor, appendRoomEvent } from './room-log';
import type { RoomCaller } from './room-access';
import { actorOf, assertWritable, reachAsMember, reachRoom } from './room-access';

export function viewCanvas(roomId: string, version: number, row: RoomCanvasVersion | null, createdAt: Date) {
  return {
    roomId,
    version,
    content: row?.content ?? '',
    updatedAt: (row?.updatedAt ?? createdAt).toISOString(),
    updatedBy: row ? { type: row.updatedByType, id: row.updatedById } : null,
  };
}

/** Writes the next version of a locked room's canvas and its `room.canvas.updated` entry; answers the version. */
export async function writeCanvas(em: EntityManager, room: Room, content: string, actor: Actor): Promise<number> {
  const version = room.canvasVersion + 1;
  await em.query(
    `INSERT INTO room_canvas_versions (room_id, version, content, updated_by_type, updated_by_id) VALUES ($1, $2, $3, $4, $5)`,
    [room.id, version, content, actor.type, actor.id]);
  await em.query('UPDATE rooms SET canvas_version = $2 WHERE id = $1', [room.id, version]);
  await appendRoomEvent(em, room, { type: 'room.canvas.updated', visibility: 'customer', actor, data: { version, actorType: actor.type } });
  room.canvasVersion = version;
  return version;
}

export async function getCanvas(ds: DataSource, caller: RoomCaller, roomId: string, version?: number) {
  const { room } = await reachAsMember(ds, caller, roomId);
  const wanted = version ?? room.canvasVersion;
  if (wanted > room.canvasVersion) throw notFound('canvas version');
  const row = wanted === 0 ? null : await ds.getRepository(RoomCanvasVersion).findOneBy({ roomId, version: wanted });
  return viewCanvas(roomId, wanted, row, room.createdAt);
}

/** A key replaces the canvas; `baseVersion` must be the current one (else 409 with `currentVersion`). */
export async function patchCanvas(ds: DataSource, caller: RoomCaller, roomId: string, baseVersion: number, content: string) {
  return ds.transaction(async (em) => {
    const { room } = await reachRoom(em, caller, roomId, true);
    assertWritable(room);
    if (baseVersion !== room.canvasVersion) {
      throw new ServiceError('CONFLICT', `the canvas is at version ${room.canvasVersion}, not ${baseVersion}`, { currentVersion: room.canvasVersion });
    }
    const version = await writeCanvas(em, room, content, actorOf(caller));
    const row = await em.getRepository(RoomCanvasVersion).findOneByOrFail({ roomId, version });
    return viewCanvas(roomId, version, row, room.createdAt);
  });
}
