import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An end user's answer to "did this release fix your problem?"; the latest answer counts. */
@Entity('release_receipts')
export class ReleaseReceipt {
  @PrimaryColumn({ name: 'release_id', type: 'text' })
  releaseId!: string;

  @PrimaryColumn({ name: 'end_user_id', type: 'text' })
  endUserId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'boolean' })
  fixed!: boolean;

  @Column({ type: 'text', nullable: true })
  comment!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
