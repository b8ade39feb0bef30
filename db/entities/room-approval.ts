import { Column, Entity, PrimaryColumn } from 'typeorm';

export const APPROVAL_KINDS = ['agent_action', 'promise', 'knowledge', 'appeal'] as const;
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'cancelled', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** A decision only a workspace owner or admin may take (docs/rooms.md#agent-runs-and-approvals). */
@Entity('room_approvals')
export class RoomApproval {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  kind!: (typeof APPROVAL_KINDS)[number];

  @Column({ type: 'text' })
  status!: ApprovalStatus;

  @Column({ name: 'subject_id', type: 'text' })
  subjectId!: string;

  @Column({ type: 'jsonb' })
  action!: { type: string; preview: string };

  @Column({ name: 'requested_by', type: 'jsonb' })
  requestedBy!: { type: string; id: string };

  @Column({ name: 'requester_principal_id', type: 'text', nullable: true })
  requesterPrincipalId!: string | null;

  @Column({ name: 'decided_by_teammate_id', type: 'text', nullable: true })
  decidedByTeammateId!: string | null;

  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true })
  decidedAt!: Date | null;

  @Column({ type: 'text', nullable: true })
  note!: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
