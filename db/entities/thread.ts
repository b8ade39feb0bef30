import { Column, Entity, PrimaryColumn } from 'typeorm';

export const THREAD_STATES = ['open', 'pending', 'resolved', 'closed'] as const;
export type ThreadState = (typeof THREAD_STATES)[number];

/** A conversation with one end user; every signal opens one. */
@Entity('threads')
export class Thread {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ name: 'end_user_id', type: 'text' })
  endUserId!: string;

  @Column({ type: 'text' })
  subject!: string;

  @Column({ type: 'text' })
  state!: ThreadState;

  @Column({ name: 'owner_id', type: 'text', nullable: true })
  ownerId!: string | null;

  @Column({ name: 'next_update_at', type: 'timestamptz', nullable: true })
  nextUpdateAt!: Date | null;

  @Column({ name: 'sla_escalated_at', type: 'timestamptz', nullable: true })
  slaEscalatedAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
