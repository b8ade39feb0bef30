import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const OPPORTUNITY_STATES = ['proposed', 'accepted', 'dismissed', 'expired'] as const;
export type OpportunityState = (typeof OPPORTUNITY_STATES)[number];

/** An outcome-based ask candidate (docs/integrations.md#rules-as-built); a person accepts it into a draft request or dismisses it. */
@Entity('proof_opportunities')
export class ProofOpportunity {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ type: 'text' }) trigger!: string;
  @Column({ name: 'person_ref', type: 'text', nullable: true }) personRef!: string | null;
  @Column({ name: 'end_user_id', type: 'text', nullable: true }) endUserId!: string | null;
  /** The value-event side's key for a person (suppression); null for candidates proposed without a value event. */
  @Column({ name: 'person_key', type: 'text', nullable: true }) personKey!: string | null;
  @Column({ name: 'moment_id', type: 'text', nullable: true }) momentId!: string | null;
  @Column({ name: 'value_event_id', type: 'text', nullable: true }) valueEventId!: string | null;
  @Column({ type: 'integer', nullable: true }) strength!: number | null;
  @Column({ type: 'text' }) state!: OpportunityState;
  @Column({ name: 'request_id', type: 'text', nullable: true }) requestId!: string | null;
  @Column({ name: 'decided_by', type: 'text', nullable: true }) decidedBy!: string | null;
  @Column({ name: 'decided_at', type: 'timestamptz', nullable: true }) decidedAt!: Date | null;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt!: Date;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
