import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A named consent template of a product; its wording lives in immutable versions. */
@Entity('consent_templates')
export class ConsentTemplate {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ type: 'text' }) name!: string;
  @Column({ name: 'latest_version', type: 'integer' }) latestVersion!: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
