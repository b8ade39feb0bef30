import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Features shipped together; publishing tells every voter and follower through the inbox. */
@Entity('releases')
export class Release {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  title!: string;

  @Column({ name: 'feature_ids', type: 'text', array: true })
  featureIds!: string[];

  @Column({ name: 'published_by', type: 'text' })
  publishedBy!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
