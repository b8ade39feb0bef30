import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A principal's one answer to a poll; a later answer replaces it. */
@Entity('room_poll_responses')
export class RoomPollResponse {
  @PrimaryColumn({ name: 'poll_id', type: 'text' })
  pollId!: string;

  @PrimaryColumn({ name: 'principal_id', type: 'text' })
  principalId!: string;

  @Column({ name: 'option_index', type: 'integer' })
  optionIndex!: number;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
