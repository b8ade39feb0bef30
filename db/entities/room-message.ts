import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintNumber } from './room';

export const ROOM_MESSAGE_VISIBILITIES = ['customer', 'internal'] as const;
export type RoomVisibility = (typeof ROOM_MESSAGE_VISIBILITIES)[number];

/** A message of a room; `internal` ones never reach an end user. */
@Entity('room_messages')
export class RoomMessage {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ type: 'bigint', transformer: bigintNumber })
  seq!: number;

  @Column({ name: 'author_type', type: 'text' })
  authorType!: 'end_user' | 'teammate' | 'agent';

  @Column({ name: 'author_principal_id', type: 'text' })
  authorPrincipalId!: string;

  @Column({ type: 'text' })
  kind!: 'text' | 'poll' | 'decision';

  @Column({ type: 'text' })
  body!: string;

  @Column({ type: 'text' })
  visibility!: RoomVisibility;

  @Column({ type: 'boolean' })
  hidden!: boolean;

  @Column({ name: 'edited_at', type: 'timestamptz', nullable: true })
  editedAt!: Date | null;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
