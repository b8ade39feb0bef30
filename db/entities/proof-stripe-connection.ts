import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { sealedColumn } from '../../runtime/secret-box';

/** A payment-processor connection of one product. */
@Entity('proof_stripe_connections')
export class ProofStripeConnection {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  state!: string;

  @Column({ name: 'token_digest', type: 'text' })
  tokenDigest!: string;

  @Column({ name: 'token_prefix', type: 'text' })
  tokenPrefix!: string;

  /** Sealed at rest (runtime/secret-box.ts); never returned, only `hasSigningSecret`. */
  @Column({ name: 'signing_secret', type: 'text', nullable: true, transformer: sealedColumn })
  signingSecret!: string | null;

  @Column({ name: 'invoice_milestones', type: 'integer', array: true })
  invoiceMilestones!: number[];

  @Column({ name: 'last_event_at', type: 'timestamptz', nullable: true })
  lastEventAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
