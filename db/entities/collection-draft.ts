import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type DraftStatus = 'open' | 'submitted' | 'expired';
export type DraftSource = 'public' | 'link' | 'continuation' | 'end_user' | 'key' | 'nojs';

/** What a customer is writing, pinned to one flow version; auto-saved until they submit. */
@Entity('collection_drafts')
export class CollectionDraft {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'flow_id', type: 'text' })
  flowId!: string;

  @Column({ name: 'flow_version_id', type: 'text' })
  flowVersionId!: string;

  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId!: string | null;

  @Column({ name: 'person_ref', type: 'text', nullable: true })
  personRef!: string | null;

  @Column({ name: 'end_user_id', type: 'text', nullable: true })
  endUserId!: string | null;

  @Column({ type: 'text' })
  source!: DraftSource;

  @Column({ type: 'boolean' })
  verified!: boolean;

  @Column({ type: 'text' })
  status!: DraftStatus;

  @Column({ type: 'integer' })
  revision!: number;

  @Column({ type: 'jsonb' })
  fields!: Record<string, unknown>;

  @Column({ name: 'proof_item_id', type: 'text', nullable: true })
  proofItemId!: string | null;

  @Column({ name: 'submitted_at', type: 'timestamptz', nullable: true })
  submittedAt!: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
