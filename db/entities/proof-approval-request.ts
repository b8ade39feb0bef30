import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type ApprovalRequestState = 'pending' | 'approved' | 'rejected' | 'superseded' | 'cancelled';

/** A version queued for a person. At most one is pending per item (a unique index holds it). */
@Entity('proof_approval_requests')
export class ProofApprovalRequest {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'proof_item_id', type: 'text' })
  proofItemId!: string;

  @Column({ name: 'version_id', type: 'text' })
  versionId!: string;

  @Column({ type: 'text' })
  state!: ApprovalRequestState;

  @Column({ name: 'requested_by_type', type: 'text' })
  requestedByType!: string;

  @Column({ name: 'requested_by_id', type: 'text', nullable: true })
  requestedById!: string | null;

  @Column({ name: 'decided_by', type: 'text', nullable: true })
  decidedBy!: string | null;

  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true })
  decidedAt!: Date | null;

  @Column({ type: 'text', nullable: true })
  reason!: string | null;

  @Column({ name: 'reminders_sent', type: 'integer' })
  remindersSent!: number;

  @Column({ name: 'last_reminded_at', type: 'timestamptz', nullable: true })
  lastRemindedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
