import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An uploaded original (`med_`): its metadata and checksum; the bytes are in the media store. */
@Entity('collection_media')
export class CollectionMedia {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'upload_id', type: 'text' })
  uploadId!: string;

  @Column({ type: 'text' })
  kind!: string;

  @Column({ name: 'content_type', type: 'text' })
  contentType!: string;

  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string) => Number(v) } })
  size!: number;

  @Column({ type: 'text' })
  sha256!: string;

  @Column({ name: 'storage_key', type: 'text' })
  storageKey!: string;

  @Column({ name: 'erased_at', type: 'timestamptz', nullable: true })
  erasedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
