import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const ASSET_APPROVAL_STATES = ['draft', 'approved', 'rejected'] as const;

/** A generated asset (a quote card) with its lineage; `body` holds the file's bytes. */
@Entity('proof_assets')
export class ProofAsset {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'asset_type', type: 'text' })
  assetType!: 'quote_card' | 'case_study';

  @Column({ name: 'source_proof_ids', type: 'text', array: true })
  sourceProofIds!: string[];

  @Column({ name: 'source_version_ids', type: 'text', array: true })
  sourceVersionIds!: string[];

  @Column({ name: 'template_id', type: 'text', nullable: true })
  templateId!: string | null;

  @Column({ name: 'brand_kit_version', type: 'text', nullable: true })
  brandKitVersion!: string | null;

  @Column({ name: 'approval_state', type: 'text' })
  approvalState!: (typeof ASSET_APPROVAL_STATES)[number];

  @Column({ name: 'channel_eligibility', type: 'text', array: true })
  channelEligibility!: string[];

  @Column({ type: 'text', array: true })
  files!: string[];

  @Column({ type: 'jsonb' })
  content!: object;

  @Column({ name: 'media_type', type: 'text' })
  mediaType!: string;

  @Column({ type: 'bytea' })
  body!: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
