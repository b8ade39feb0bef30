import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const REQUEST_CHANNELS = ['link', 'email', 'in_app', 'room', 'support', 'survey', 'api'] as const;
export type RequestChannel = (typeof REQUEST_CHANNELS)[number];
export const REQUEST_STATUSES = ['draft', 'sent', 'reminded', 'responded', 'cancelled', 'opted_out', 'expired'] as const;
export type RequestStatus = (typeof REQUEST_STATUSES)[number];

export interface RequestRecipient {
  email?: string;
  endUserId?: string;
  personRef?: string;
  name?: string;
}

/**
 * A personal request (ProofRequest): a link for one customer, pinned to the flow version live when it
 * was made. Only the SHA-256 of its `pr_` secret is kept.
 */
@Entity('proof_requests')
export class ProofRequest {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ name: 'flow_id', type: 'text' }) flowId!: string;
  @Column({ name: 'flow_version_id', type: 'text' }) flowVersionId!: string;
  @Column({ type: 'text' }) channel!: RequestChannel;
  @Column({ type: 'jsonb' }) recipient!: RequestRecipient;
  @Column({ name: 'recipient_id', type: 'text', nullable: true }) recipientId!: string | null;
  @Column({ type: 'text', nullable: true }) message!: string | null;
  @Column({ name: 'expires_in_days', type: 'integer' }) expiresInDays!: number;
  @Column({ type: 'text' }) status!: RequestStatus;
  @Column({ name: 'link_token_hash', type: 'text', nullable: true }) linkTokenHash!: string | null;
  @Column({ name: 'remind_after_days', type: 'integer', nullable: true }) remindAfterDays!: number | null;
  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true }) sentAt!: Date | null;
  @Column({ name: 'reminded_at', type: 'timestamptz', nullable: true }) remindedAt!: Date | null;
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true }) expiresAt!: Date | null;
  @Column({ name: 'responded_at', type: 'timestamptz', nullable: true }) respondedAt!: Date | null;
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true }) closedAt!: Date | null;
  @Column({ name: 'opportunity_id', type: 'text', nullable: true }) opportunityId!: string | null;
  @Column({ name: 'bulk_id', type: 'text', nullable: true }) bulkId!: string | null;
  @Column({ name: 'created_by', type: 'jsonb' }) createdBy!: { type: string; id: string | null };
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
