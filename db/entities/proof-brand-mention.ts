import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A public mention of the product found elsewhere. */
@Entity('proof_brand_mentions')
export class ProofBrandMention {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  platform!: string;

  @Column({ type: 'text' })
  url!: string;

  @Column({ type: 'text', nullable: true })
  author!: string | null;

  @Column({ type: 'text' })
  text!: string;

  @Column({ type: 'numeric', nullable: true })
  rating!: string | null;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  @Column({ type: 'text' })
  reuse!: string;

  @Column({ name: 'signal_id', type: 'text', nullable: true })
  signalId!: string | null;

  @Column({ name: 'imported_item_id', type: 'text', nullable: true })
  importedItemId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
