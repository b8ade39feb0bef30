import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type ResolutionState = 'pending' | 'escalated' | 'completed';

/** A filed request to withdraw an item; a person completes it, and completion is final. */
@Entity('proof_revocations')
export class ProofRevocation {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'proof_item_id', type: 'text' })
  proofItemId!: string;

  @Column({ name: 'consent_grant_id', type: 'text', nullable: true })
  consentGrantId!: string | null;

  @Column({ name: 'request_text', type: 'text', nullable: true })
  requestText!: string | null;

  @Column({ name: 'resolution_state', type: 'text' })
  resolutionState!: ResolutionState;

  @Column({ name: 'immediate_policy_action', type: 'text' })
  immediatePolicyAction!: string;

  @Column({ name: 'sla_deadline_at', type: 'timestamptz' })
  slaDeadlineAt!: Date;

  @Column({ name: 'requested_by_type', type: 'text' })
  requestedByType!: string;

  @Column({ name: 'requested_by_id', type: 'text', nullable: true })
  requestedById!: string | null;

  @Column({ name: 'escalated_at', type: 'timestamptz', nullable: true })
  escalatedAt!: Date | null;

  @Column({ name: 'completed_by', type: 'text', nullable: true })
  completedBy!: string | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
