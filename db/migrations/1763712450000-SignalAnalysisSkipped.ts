import { MigrationInterface, QueryRunner } from 'typeorm';

/** A signal taken in while no AI provider is configured is 'skipped': no analysis workflow starts for it. */
export class SignalAnalysisSkipped1763712450000 implements MigrationInterface {
  name = 'SignalAnalysisSkipped1763712450000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE signals DROP CONSTRAINT signals_analysis_state_check`);
    await q.query(`ALTER TABLE signals ADD CONSTRAINT signals_analysis_state_check
      CHECK (analysis_state IN ('pending', 'analyzing', 'done', 'failed', 'waiting', 'skipped'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE signals DROP CONSTRAINT signals_analysis_state_check`);
    await q.query(`UPDATE signals SET analysis_state = 'pending' WHERE analysis_state = 'skipped'`);
    await q.query(`ALTER TABLE signals ADD CONSTRAINT signals_analysis_state_check
      CHECK (analysis_state IN ('pending', 'analyzing', 'done', 'failed', 'waiting'))`);
  }
}
