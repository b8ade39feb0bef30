import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One principal's reaction with one emoji to one message; toggling again removes it. */
@Entity('room_reactions')
export class RoomReaction {
  @PrimaryColumn({ name: 'message_id', type: 'text' })
  messageId!: string;

  @PrimaryColumn({ type: 'text' })
  emoji!: string;

  @PrimaryColumn({ name: 'principal_id', type: 'text' })
  principalId!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
