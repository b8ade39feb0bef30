import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** What the customer allowed for one item. `evidence` (network address and the like) never leaves. */
@Entity('consent_grants')
export class ConsentGrant {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'proof_item_id', type: 'text' })
  proofItemId!: string;

  @Column({ name: 'approved_version_id', type: 'text' })
  approvedVersionId!: string;

  @Column({ type: 'text' })
  state!: 'active' | 'superseded' | 'revoked';

  @Column({ name: 'display_mode', type: 'text' })
  displayMode!: string;

  @Column({ name: 'identity_fields', type: 'text', array: true })
  identityFields!: string[];

  @Column({ type: 'text', array: true })
  channels!: string[];

  @Column({ type: 'jsonb' })
  products!: { all?: boolean; ids?: string[] };

  @Column({ type: 'text', array: true })
  media!: string[];

  @Column({ name: 'paid_use_allowed', type: 'boolean' })
  paidUseAllowed!: boolean;

  @Column({ name: 'translation_allowed', type: 'boolean' })
  translationAllowed!: boolean;

  @Column({ type: 'text', array: true })
  geography!: string[];

  @Column({ name: 'valid_until', type: 'timestamptz', nullable: true })
  validUntil!: Date | null;

  @Column({ name: 'customer_approved_wording', type: 'boolean' })
  customerApprovedWording!: boolean;

  @Column({ name: 'receipt_hash', type: 'text', nullable: true })
  receiptHash!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  evidence!: Record<string, unknown> | null;

  @Column({ name: 'consent_template_version_id', type: 'text', nullable: true })
  consentTemplateVersionId!: string | null;

  @Column({ name: 'wording_hash', type: 'text', nullable: true })
  wordingHash!: string | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
