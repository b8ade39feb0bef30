import { Column, Entity, PrimaryColumn } from 'typeorm';

export const JOB_TYPES = ['send_release_receipts', 'make_promise', 'complete_promise', 'open_solve_session', 'end_solve_session'] as const;
export type JobType = (typeof JOB_TYPES)[number];
export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A key's asynchronous room job (`room-job/<jobId>`, docs/rooms.md#jobs-promises-solve-sessions-and-handoff); its effect is written once. */
@Entity('room_jobs')
export class RoomJob {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  type!: JobType;

  @Column({ type: 'jsonb' })
  params!: Record<string, unknown>;

  @Column({ type: 'text' })
  status!: JobStatus;

  @Column({ type: 'jsonb', nullable: true })
  result!: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true })
  error!: { code: string; message: string } | null;

  @Column({ name: 'created_by_type', type: 'text' })
  createdByType!: string;

  @Column({ name: 'created_by_id', type: 'text' })
  createdById!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;
}
