import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const PROOF_TYPES = ['text', 'audio', 'video', 'image', 'review', 'case_study', 'release_story'] as const;
export type ProofType = (typeof PROOF_TYPES)[number];
export const PROOF_ITEM_STATUSES = ['submitted', 'in_review', 'approved', 'rejected', 'revoked', 'deleted'] as const;
export type ProofItemStatus = (typeof PROOF_ITEM_STATUSES)[number];

/** A customer story. Its product comes from the submitting key; its content lives in versions. */
@Entity('proof_items')
export class ProofItem {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'submission_id', type: 'text' })
  submissionId!: string;

  @Column({ type: 'text' })
  type!: ProofType;

  @Column({ type: 'text' })
  status!: ProofItemStatus;

  @Column({ name: 'status_reason', type: 'text', nullable: true })
  statusReason!: string | null;

  @Column({ name: 'status_before_delete', type: 'text', nullable: true })
  statusBeforeDelete!: ProofItemStatus | null;

  @Column({ name: 'customer_person_id', type: 'text', nullable: true })
  customerPersonId!: string | null;

  @Column({ name: 'customer_email', type: 'text', nullable: true })
  customerEmail!: string | null;

  @Column({ name: 'customer_name', type: 'text', nullable: true })
  customerName!: string | null;

  @Column({ name: 'original_version_id', type: 'text', nullable: true })
  originalVersionId!: string | null;

  @Column({ name: 'approved_public_version_id', type: 'text', nullable: true })
  approvedPublicVersionId!: string | null;

  @Column({ name: 'over_limit', type: 'boolean' })
  overLimit!: boolean;

  @Column({ name: 'over_limit_reasons', type: 'text', array: true })
  overLimitReasons!: string[];

  @Column({ type: 'jsonb' })
  incentive!: { offered: boolean; description?: string };

  @Column({ name: 'verification_state', type: 'text' })
  verificationState!: string;

  /** Set by a filed revocation: new renders stop at once, before any person acts. */
  @Column({ name: 'render_hold', type: 'boolean' })
  renderHold!: boolean;

  /** Paused by the customer through their control link: nothing renders until they resume. */
  @Column({ name: 'customer_paused_at', type: 'timestamptz', nullable: true })
  customerPausedAt!: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;

  @Column({ name: 'recovery_closes_at', type: 'timestamptz', nullable: true })
  recoveryClosesAt!: Date | null;

  @Column({ name: 'recovery_closed_at', type: 'timestamptz', nullable: true })
  recoveryClosedAt!: Date | null;

  @Column({ name: 'created_by_key_id', type: 'text', nullable: true })
  createdByKeyId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
