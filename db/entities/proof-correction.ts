import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A customer's request to correct their story; a teammate closes it with a note the customer sees. */
@Entity('proof_corrections')
export class ProofCorrection {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ name: 'proof_item_id', type: 'text' }) proofItemId!: string;
  @Column({ name: 'version_id', type: 'text', nullable: true }) versionId!: string | null;
  @Column({ type: 'text' }) message!: string;
  @Column({ type: 'text' }) status!: 'open' | 'closed';
  @Column({ type: 'text', nullable: true }) note!: string | null;
  @Column({ name: 'closed_by', type: 'text', nullable: true }) closedBy!: string | null;
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true }) closedAt!: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
