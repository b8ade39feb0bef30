import { DataSource } from 'typeorm';
import { compactRoomEvents } from '../../db/rooms/compaction';
import { Config } from '../../runtime/config';

interface RoomMaintenanceDeps {
  dataSource: DataSource;
  config: Pick<Config, 'roomEventRetentionMs'>;
}

/** The Rooms step of the maintenance workflow; idempotent (a repeat finds nothing older than the retention). */
export function createRoomMaintenanceActivities({ dataSource, config }: RoomMaintenanceDeps) {
  return {
    async compactRoomEvents(): Promise<{ rooms: number; events: number }> {
      return compactRoomEvents(dataSource, config.roomEventRetentionMs);
    },
  };
}
