import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { ErrorCode } from '../../runtime/service-error';

export const AI_OPERATIONS = ['summarize', 'ask_draft', 'case_study'] as const;
export type AiOperationKind = (typeof AI_OPERATIONS)[number];
export type AiOperationStatus = 'running' | 'succeeded' | 'discarded' | 'failed';

/** Why an operation produced nothing to show; `details` is what the refusal answered. */
export interface AiOperationFailure {
  code: ErrorCode;
  reason: string;
  attempts?: number;
  details?: object;
}

/**
 * One proof AI operation (docs/ai.md#operation-records): what it was asked, by whom, and its validated outcome. `input`
 * is what the provider is sent and what the validator checks against; it never leaves the service.
 */
@Entity('proof_ai_operations')
export class ProofAiOperation {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'product_id', type: 'text' })
  productId!: string;

  @Column({ type: 'text' })
  operation!: AiOperationKind;

  @Column({ type: 'text' })
  status!: AiOperationStatus;

  @Column({ type: 'jsonb' })
  program!: { id: string; version: string };

  @Column({ type: 'jsonb', nullable: true })
  model!: object | null;

  @Column({ type: 'jsonb' })
  subject!: { proofItemIds: string[]; versionIds: string[] };

  @Column({ type: 'jsonb' })
  input!: object;

  @Column({ type: 'jsonb', nullable: true })
  result!: object | null;

  @Column({ type: 'jsonb', nullable: true })
  failure!: AiOperationFailure | null;

  /** The budget month the operation took a unit of (`ai:YYYY-MM`); a failure gives it back. */
  @Column({ name: 'budget_period', type: 'text', nullable: true })
  budgetPeriod!: string | null;

  @Column({ name: 'created_by', type: 'jsonb' })
  createdBy!: { type: string; id: string | null };

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;
}
