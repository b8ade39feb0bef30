import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ReportReason } from './room-moderation-case';

/** One reporter's report of a case's message; a reporter counts once. */
@Entity('room_moderation_reports')
export class RoomModerationReport {
  @PrimaryColumn({ name: 'case_id', type: 'text' })
  caseId!: string;

  @PrimaryColumn({ name: 'reporter_principal_id', type: 'text' })
  reporterPrincipalId!: string;

  @Column({ type: 'text' })
  reason!: ReportReason;

  @Column({ type: 'text', nullable: true })
  note!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
