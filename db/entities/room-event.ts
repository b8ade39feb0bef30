import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber } from './room';
import type { RoomVisibility } from './room-message';

/** One entry of a room's event log; `seq` is gap-free per room, readers skip what they may not see. */
@Entity('room_events')
export class RoomEvent {
  @PrimaryColumn({ name: 'room_id', type: 'text' })
  roomId!: string;

  @PrimaryColumn({ type: 'bigint', transformer: bigintNumber })
  seq!: number;

  @Column({ type: 'text' })
  type!: string;

  @Column({ type: 'text' })
  visibility!: RoomVisibility;

  @Column({ name: 'audience_principal_id', type: 'text', nullable: true })
  audiencePrincipalId!: string | null;

  @Column({ name: 'actor_type', type: 'text' })
  actorType!: 'end_user' | 'teammate' | 'agent' | 'key' | 'system';

  @Column({ name: 'actor_id', type: 'text', nullable: true })
  actorId!: string | null;

  @Column({ type: 'jsonb' })
  data!: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
