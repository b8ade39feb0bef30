import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The options of a `poll` message (its body is the question). */
@Entity('room_polls')
export class RoomPoll {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'message_id', type: 'text' })
  messageId!: string;

  @Column({ type: 'text', array: true })
  options!: string[];

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
