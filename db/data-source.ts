import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { resealStoredSecrets } from './platform/secrets-at-rest';

// Any fixed number shared by every process of this service: migrations run under it one at a time.
const MIGRATION_LOCK = 7_412_001;

/**
 * A pool client that always has an `error` listener, and counts what it sends. A backend ended under a busy client (a failover,
 * `pg_terminate_backend`) can emit a second error after pg-pool's one-shot listener of `pool.query` has
 * gone, and an unheard `error` event ends the process. The query that was running still gets its error,
 * and the pool drops the client; this only keeps the stray event from being fatal.
 */
class ListenedClient extends Client {
  constructor(config?: ConstructorParameters<typeof Client>[0]) {
    super(config);
    this.on('error', () => undefined);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((...args: unknown[]) => {
      statements += 1;
      return query(...args);
    }) as Client['query'];
  }
}

let statements = 0;

/** How many statements this process has sent to PostgreSQL: a benchmark divides it by the requests it made. */
export const statementsSent = (): number => statements;

export function createDataSource(url: string, poolSize = 10): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    synchronize: false,
    // Failed queries are logged by the API's error handler without their parameters, which hold
    // customer text and personal data.
    logging: false,
    // Idle connections are kept a minute (pg's default is 10 s): after a lull, a burst does not wait
    // for new connections, and the hot path's prepared statements survive on them.
    extra: { max: poolSize, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 60_000, Client: ListenedClient },
  });
}

/** Applies pending migrations; safe when several API and worker processes start at once. */
export async function migrate(ds: DataSource): Promise<void> {
  const runner = ds.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await ds.runMigrations();
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}

/** Connects, migrates and reseals stored secrets under the current key: what every process does before serving. */
export async function openDatabase(url: string, poolSize?: number): Promise<DataSource> {
  const ds = createDataSource(url, poolSize);
  await ds.initialize();
  await migrate(ds);
  await resealStoredSecrets(ds);
  return ds;
}
