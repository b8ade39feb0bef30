import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A deal pushed from a CRM, upserted per (product, format, external id). */
@Entity('proof_crm_deals')
export class ProofCrmDeal {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  format!: string;

  @Column({ name: 'external_id', type: 'text' })
  externalId!: string;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  @Column({ type: 'text', nullable: true })
  stage!: string | null;

  @Column({ type: 'text' })
  status!: string;

  @Column({ type: 'numeric', nullable: true })
  amount!: string | null;

  @Column({ type: 'text', nullable: true })
  currency!: string | null;

  @Column({ name: 'close_date', type: 'date', nullable: true })
  closeDate!: string | null;

  @Column({ name: 'account_name', type: 'text', nullable: true })
  accountName!: string | null;

  @Column({ name: 'account_domain', type: 'text', nullable: true })
  accountDomain!: string | null;

  @Column({ type: 'jsonb' })
  contacts!: unknown;

  @Column({ name: 'proof_item_ids', type: 'text', array: true })
  proofItemIds!: string[];

  @Column({ name: 'external_updated_at', type: 'timestamptz', nullable: true })
  externalUpdatedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
