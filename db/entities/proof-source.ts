import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An attributed source record with its provenance, oldest step first. */
@Entity('proof_sources')
export class ProofSource {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  system!: string;

  @Column({ name: 'external_id', type: 'text' })
  externalId!: string;

  @Column({ type: 'text', nullable: true })
  url!: string | null;

  @Column({ type: 'text' })
  kind!: string;

  @Column({ name: 'captured_at', type: 'timestamptz' })
  capturedAt!: Date;

  @Column({ name: 'captured_text', type: 'text', nullable: true })
  capturedText!: string | null;

  @Column({ type: 'text', nullable: true })
  title!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  attribution!: unknown | null;

  @Column({ type: 'jsonb' })
  links!: unknown;

  @Column({ type: 'jsonb' })
  provenance!: unknown;

  @Column({ type: 'text' })
  reuse!: string;

  @Column({ type: 'text', array: true })
  reasons!: string[];

  @Column({ name: 'proof_item_id', type: 'text', nullable: true })
  proofItemId!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
