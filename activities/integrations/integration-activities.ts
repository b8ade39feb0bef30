import { DataSource } from 'typeorm';
import { runHealthChecks } from '../../db/integrations/health';
import { Config } from '../../runtime/config';

export interface IntegrationActivityDeps {
  dataSource: DataSource;
  config: Config;
}

/** Activities of the integrations domain. A repeated health run warns nothing twice (one row per check, subject and day). */
export function createIntegrationActivities({ dataSource, config }: IntegrationActivityDeps) {
  return {
    async runProofHealthChecks(productId: string): Promise<number> {
      return runHealthChecks(dataSource, productId, config.proofHealthConsentExpiryDays);
    },
  };
}
