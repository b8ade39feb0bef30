import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An end user's vote on a feature; one per end user. */
@Entity('feature_votes')
export class FeatureVote {
  @PrimaryColumn({ name: 'feature_id', type: 'text' })
  featureId!: string;

  @PrimaryColumn({ name: 'end_user_id', type: 'text' })
  endUserId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
