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
