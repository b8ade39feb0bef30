import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An end user following a feature, to hear when it ships. */
@Entity('feature_follows')
export class FeatureFollow {
  @PrimaryColumn({ name: 'feature_id', type: 'text' })
  featureId!: string;

  @PrimaryColumn({ name: 'end_user_id', type: 'text' })
  endUserId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
