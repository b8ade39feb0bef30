import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { sealedColumn } from '../../runtime/secret-box';

/** A product of an organization; its identity key signs end-user tokens (HS256, `kid` = identityKeyId). */
@Entity('products')
export class Product {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'boolean', default: true })
  active!: boolean;

  @Column({ name: 'identity_key_id', type: 'text' })
  identityKeyId!: string;

  @Column({ name: 'identity_secret', type: 'text', transformer: sealedColumn })
  identitySecret!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
