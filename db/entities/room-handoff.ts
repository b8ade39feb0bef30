import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A room handed to a person: while one is active the agents take no invocations. */
@Entity('room_handoffs')
export class RoomHandoff {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ type: 'text' })
  state!: 'active' | 'ended';

  @Column({ name: 'requested_by_type', type: 'text' })
  requestedByType!: 'key' | 'end_user';

  /** The key's id, or the end user's principal id. */
  @Column({ name: 'requested_by_id', type: 'text' })
  requestedById!: string;

  @Column({ type: 'text', nullable: true })
  reason!: string | null;

  @Column({ name: 'teammate_id', type: 'text', nullable: true })
  teammateId!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt!: Date | null;

  @Column({ name: 'ended_by', type: 'jsonb', nullable: true })
  endedBy!: { type: string; id: string } | null;
}
