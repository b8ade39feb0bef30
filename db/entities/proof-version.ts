import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const APPROVAL_STATES = ['draft', 'pending_review', 'approved', 'rejected'] as const;
export type ApprovalState = (typeof APPROVAL_STATES)[number];

export interface ProofContent {
  text?: string;
  title?: string;
  rating?: number;
  mediaAssetIds?: string[];
  attribution?: Record<string, string>;
  answers?: Record<string, unknown>;
}

/** One immutable wording of an item; a database trigger lets only `approval_state` change. */
@Entity('proof_versions')
export class ProofVersion {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'proof_item_id', type: 'text' })
  proofItemId!: string;

  @Column({ name: 'version_number', type: 'integer' })
  versionNumber!: number;

  @Column({ name: 'is_original', type: 'boolean' })
  isOriginal!: boolean;

  @Column({ type: 'jsonb' })
  content!: ProofContent;

  @Column({ name: 'content_hash', type: 'text' })
  contentHash!: string;

  @Column({ name: 'created_by_type', type: 'text' })
  createdByType!: string;

  @Column({ name: 'created_by_id', type: 'text', nullable: true })
  createdById!: string | null;

  @Column({ name: 'model_id', type: 'text', nullable: true })
  modelId!: string | null;

  @Column({ name: 'change_reason', type: 'text', nullable: true })
  changeReason!: string | null;

  @Column({ name: 'parent_version_id', type: 'text', nullable: true })
  parentVersionId!: string | null;

  @Column({ type: 'text', nullable: true })
  locale!: string | null;

  @Column({ name: 'semantic_diff', type: 'jsonb' })
  semanticDiff!: Record<string, unknown>;

  @Column({ name: 'approval_state', type: 'text' })
  approvalState!: ApprovalState;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
