import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const DOMAIN_STATUSES = ['pending_verification', 'verified', 'failed'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

/** A custom hostname that serves a flow's collection page once its DNS records verify. */
@Entity('collection_domains')
export class CollectionDomain {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'flow_id', type: 'text' }) flowId!: string;
  @Column({ type: 'text' }) hostname!: string;
  @Column({ type: 'text' }) status!: DomainStatus;
  @Column({ name: 'verification_token', type: 'text' }) verificationToken!: string;
  @Column({ name: 'last_checked_at', type: 'timestamptz', nullable: true }) lastCheckedAt!: Date | null;
  @Column({ name: 'verified_at', type: 'timestamptz', nullable: true }) verifiedAt!: Date | null;
  /** What the last DNS check missed, in words; null once verified or before any check. */
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError!: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
