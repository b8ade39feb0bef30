import { Column, Entity, PrimaryColumn } from 'typeorm';

export const REPORT_REASONS = ['spam', 'abuse', 'harassment', 'privacy', 'other'] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];
export const CASE_STATES = ['open', 'actioned', 'appealed', 'reversed', 'upheld'] as const;
export type CaseState = (typeof CASE_STATES)[number];

/**
 * The one moderation case of a reported message (docs/rooms.md#room-states, docs/rooms.md#reactions-attachments-polls-and-moderation); `reason` is the first
 * report's.
 */
@Entity('room_moderation_cases')
export class RoomModerationCase {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'message_id', type: 'text' })
  messageId!: string;

  @Column({ type: 'text' })
  reason!: ReportReason;

  @Column({ type: 'text' })
  state!: CaseState;

  @Column({ name: 'report_count', type: 'integer' })
  reportCount!: number;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
