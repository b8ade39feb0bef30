import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { sealedColumn } from '../../runtime/secret-box';

/**
 * Where a workspace's events go. The signing secret is stored sealed (every delivery signs with it, so
 * it cannot be a hash); it leaves the service only in the answers to create and rotate.
 */
@Entity('webhook_endpoints')
export class WebhookEndpoint {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ type: 'text' })
  url!: string;

  @Column({ type: 'text' })
  description!: string;

  @Column({ type: 'text', array: true })
  subscriptions!: string[];

  @Column({ type: 'boolean' })
  enabled!: boolean;

  @Column({ type: 'text', transformer: sealedColumn })
  secret!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;
}
