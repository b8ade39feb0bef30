import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const ROUTING_STATES = ['new', 'in_progress', 'done'] as const;
export type RoutingState = (typeof ROUTING_STATES)[number];

/** The follow-up of one scored response, whatever its band. */
@Entity('proof_routings')
export class ProofRouting {
  @PrimaryColumn({ type: 'text' }) id!: string;
  @Column({ name: 'organization_id', type: 'text' }) organizationId!: string;
  @Column({ name: 'product_id', type: 'text' }) productId!: string;
  @Column({ name: 'proof_item_id', type: 'text' }) proofItemId!: string;
  @Column({ name: 'flow_id', type: 'text', nullable: true }) flowId!: string | null;
  @Column({ name: 'flow_version_id', type: 'text', nullable: true }) flowVersionId!: string | null;
  @Column({ name: 'request_id', type: 'text', nullable: true }) requestId!: string | null;
  @Column({ type: 'text' }) scale!: 'nps' | 'five_star';
  @Column({ type: 'integer' }) score!: number;
  @Column({ type: 'text' }) band!: string;
  @Column({ name: 'follow_up', type: 'text' }) followUp!: string;
  @Column({ type: 'text' }) state!: RoutingState;
  @Column({ name: 'room_id', type: 'text', nullable: true }) roomId!: string | null;
  @Column({ type: 'text', nullable: true }) note!: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
