import { DataSource } from 'typeorm';
import { sweepUnattachedAttachments } from '../../db/rooms/attachments';
import { compactRoomEvents } from '../../db/rooms/compaction';
import { Config } from '../../runtime/config';
import { mediaStoreOf } from '../../runtime/media-store';

interface RoomMaintenanceDeps {
  dataSource: DataSource;
  config: Config;
}

/** The Rooms steps of the maintenance workflow; idempotent (a repeat finds nothing left to do). */
export function createRoomMaintenanceActivities({ dataSource, config }: RoomMaintenanceDeps) {
  return {
    async compactRoomEvents(): Promise<{ rooms: number; events: number }> {
      return compactRoomEvents(dataSource, config.roomEventRetentionMs);
    },

    /** Room uploads no message took within 24 h, bytes included; a failed erase is retried next round. */
    async sweepRoomAttachments(): Promise<number> {
      return sweepUnattachedAttachments(dataSource, mediaStoreOf(config));
    },
  };
}
