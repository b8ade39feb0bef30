import { DataSource } from 'typeorm';
import { createDataSource, migrate } from '../db/data-source';
import { resealStoredSecrets } from '../db/platform/secrets-at-rest';
import { Config } from './config';

export const EMBEDDED_DATABASE = 'sv';

/** DATABASE_URL, or the embedded PostgreSQL that `npm start` runs. */
export function databaseUrlOf(config: Config): string {
  return config.databaseUrl ?? `postgres://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/${EMBEDDED_DATABASE}`;
}

/** TEMPORAL_ADDRESS, or the dev server that `npm start` runs. */
export function temporalAddressOf(config: Config): string {
  return config.temporalAddress ?? `127.0.0.1:${config.temporalDevPort}`;
}

export async function openDatabase(url: string, poolSize?: number): Promise<DataSource> {
  const ds = createDataSource(url, poolSize);
  await ds.initialize();
  await migrate(ds);
  await resealStoredSecrets(ds);
  return ds;
}
