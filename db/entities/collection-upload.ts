import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type UploadStatus = 'open' | 'assembling' | 'complete' | 'cancelled' | 'expired';
export type UploadKind = 'video' | 'audio' | 'image';

/** A resumable upload of one file in parts; the parts and the original live in the media store. */
@Entity('collection_uploads')
export class CollectionUpload {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  /** Null only for a flow's welcome video (purpose `welcome_video`). */
  @Column({ name: 'draft_id', type: 'text', nullable: true })
  draftId!: string | null;

  /** The draft's flow, and the SHA-256 of the client address that opened the upload: the upload quotas' sums. */
  @Column({ name: 'flow_id', type: 'text', nullable: true })
  flowId!: string | null;

  @Column({ name: 'client_address', type: 'text', nullable: true })
  clientAddress!: string | null;

  @Column({ type: 'text' })
  kind!: UploadKind;

  @Column({ type: 'text' })
  purpose!: 'response' | 'photo' | 'logo' | 'welcome_video';

  @Column({ name: 'question_id', type: 'text', nullable: true })
  questionId!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  capture!: Record<string, unknown> | null;

  @Column({ type: 'text' })
  status!: UploadStatus;

  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  size!: number;

  @Column({ type: 'text' })
  sha256!: string;

  @Column({ name: 'part_size', type: 'integer' })
  partSize!: number;

  @Column({ name: 'part_count', type: 'integer' })
  partCount!: number;

  @Column({ name: 'content_type', type: 'text', nullable: true })
  contentType!: string | null;

  @Column({ name: 'asset_id', type: 'text', nullable: true })
  assetId!: string | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: 'CHECKSUM_MISMATCH' | 'UNSUPPORTED_MEDIA_TYPE' | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
