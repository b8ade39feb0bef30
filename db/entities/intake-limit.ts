import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A workspace's own signal allowance and safety ceiling; null keeps the configured default. */
@Entity('intake_limits')
export class IntakeLimit {
  @PrimaryColumn({ name: 'organization_id', type: 'text' })
  organizationId!: string;

  @Column({ name: 'monthly_signal_allowance', type: 'integer', nullable: true })
  monthlySignalAllowance!: number | null;

  @Column({ name: 'daily_safety_ceiling', type: 'integer', nullable: true })
  dailySafetyCeiling!: number | null;

  /** Proof AI operations per UTC month (docs/ai.md#walk-through). */
  @Column({ name: 'ai_monthly_allowance', type: 'integer', nullable: true })
  aiMonthlyAllowance!: number | null;
}
