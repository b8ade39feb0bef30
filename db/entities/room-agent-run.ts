import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { RoomVisibility } from './room-message';

export const RUN_STATUSES = ['queued', 'running', 'awaiting_approval', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];

export interface RunStep {
  type: 'model_call' | 'approval' | 'side_effect';
  status: 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'skipped';
  approvalId?: string;
  resultId?: string;
  startedAt: string;
  completedAt: string | null;
}

export interface SideEffect {
  action: 'post_message' | 'update_canvas';
  approvalId: string | null;
  executedAt: string | null;
  resultId: string | null;
}

/** One invocation of a room agent (`agent-run/<runId>`), from queued to a terminal status. */
@Entity('room_agent_runs')
export class RoomAgentRun {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'room_id', type: 'text' })
  roomId!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  alias!: 'assistant' | 'editor';

  @Column({ type: 'text' })
  status!: RunStatus;

  @Column({ type: 'text' })
  visibility!: RoomVisibility;

  @Column({ type: 'text' })
  input!: string;

  @Column({ name: 'started_by_type', type: 'text' })
  startedByType!: 'end_user' | 'key';

  @Column({ name: 'started_by_id', type: 'text' })
  startedById!: string;

  @Column({ name: 'starter_principal_id', type: 'text', nullable: true })
  starterPrincipalId!: string | null;

  @Column({ type: 'jsonb' })
  steps!: RunStep[];

  @Column({ type: 'text', nullable: true })
  output!: string | null;

  @Column({ name: 'base_canvas_version', type: 'integer', nullable: true })
  baseCanvasVersion!: number | null;

  @Column({ name: 'side_effect', type: 'jsonb', nullable: true })
  sideEffect!: SideEffect | null;

  @Column({ name: 'last_error', type: 'jsonb', nullable: true })
  lastError!: { code: string; message: string } | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;

  @Column({ name: 'cancelled_at', type: 'timestamptz', nullable: true })
  cancelledAt!: Date | null;

  @Column({ name: 'failed_at', type: 'timestamptz', nullable: true })
  failedAt!: Date | null;
}
