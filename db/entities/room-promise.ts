import { Column, Entity, PrimaryColumn } from 'typeorm';

export const PROMISE_STATES = ['pending_approval', 'active', 'completed', 'missed', 'rejected'] as const;
export type PromiseState = (typeof PROMISE_STATES)[number];

/** A promise made to a room's customers: a person approves it, then `room-promise/<id>` watches its due date. */
@Entity('room_promises')
export class RoomPromise {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'job_id', type: 'text' })
  jobId!: string;

  @Column({ type: 'text' })
  text!: string;

  @Column({ name: 'due_at', type: 'timestamptz' })
  dueAt!: Date;

  @Column({ type: 'text' })
  state!: PromiseState;

  @Column({ name: 'approval_id', type: 'text' })
  approvalId!: string;

  @Column({ name: 'approved_at', type: 'timestamptz', nullable: true })
  approvedAt!: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;

  @Column({ name: 'missed_at', type: 'timestamptz', nullable: true })
  missedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
