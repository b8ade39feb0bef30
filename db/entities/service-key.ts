import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A non-human integration credential. The key itself is shown once; only its SHA-256 digest is kept. */
@Entity('service_keys')
export class ServiceKey {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text', nullable: true })
  productId!: string | null;

  @Column({ type: 'text' })
  environment!: string;

  @Column({ type: 'text' })
  digest!: string;

  @Column({ type: 'text' })
  prefix!: string;

  @Column({ type: 'text', array: true })
  scopes!: string[];

  @Column({ name: 'created_by', type: 'text', nullable: true })
  createdBy!: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ name: 'rotated_from_id', type: 'text', nullable: true })
  rotatedFromId!: string | null;

  @Column({ name: 'replaced_by_id', type: 'text', nullable: true })
  replacedById!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
