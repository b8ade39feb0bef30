import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A customer of the product, named by the integrator's own id; created or updated by signal intake. */
@Entity('end_users')
export class EndUser {
  @PrimaryColumn({ name: 'product_id', type: 'text' })
  productId!: string;

  @PrimaryColumn({ name: 'end_user_id', type: 'text' })
  endUserId!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ type: 'text', nullable: true })
  email!: string | null;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
