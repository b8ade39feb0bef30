import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export interface ConsentTemplateTerms {
  displayModes: string[];
  identityFields: string[];
  channels: string[];
  media: string[];
  paidUseAllowed: boolean;
  translationAllowed: boolean;
  geography: string[];
  validityDays: number | null;
}

/** One immutable version of a consent template: the exact wording a customer saw, and its hash. */
@Entity('consent_template_versions')
export class ConsentTemplateVersion {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'template_id', type: 'text' }) templateId!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ type: 'integer' }) version!: number;
  @Column({ type: 'text' }) name!: string;
  @Column({ type: 'text' }) wording!: string;
  @Column({ name: 'wording_hash', type: 'text' }) wordingHash!: string;
  @Column({ type: 'jsonb' }) terms!: ConsentTemplateTerms;
  @Column({ name: 'published_by', type: 'text', nullable: true }) publishedBy!: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
