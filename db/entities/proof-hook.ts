import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** An inbound value-event hook; only the SHA-256 digest of its token is kept. */
@Entity('proof_hooks')
export class ProofHook {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  source!: string;

  @Column({ type: 'text' })
  state!: string;

  @Column({ name: 'token_digest', type: 'text' })
  tokenDigest!: string;

  @Column({ name: 'token_prefix', type: 'text' })
  tokenPrefix!: string;

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy!: string | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
