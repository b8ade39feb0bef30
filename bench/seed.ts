import { BENCH_DATABASE_URL, LARGE_SIGNALS, openBenchDatabase, scaleWorkspaces } from './scale-workspaces';

/**
 * npm run bench:seed: the bench database (DATABASE_URL, by default sv_bench_scale on the local PostgreSQL) with
 * a workspace of LARGE_SIGNALS signals (BENCH_SIGNALS, 1,000,000 by default) and everything in proportion, and one
 * with a thousandth of it; a workspace already seeded is kept. Prints each table's time.
 */
async function main(): Promise<void> {
  const start = performance.now();
  const where = new URL(BENCH_DATABASE_URL);
  console.log(`bench:seed  ${where.host}${where.pathname}, ${LARGE_SIGNALS} signals in the large workspace`);
  const ds = await openBenchDatabase();
  try {
    await scaleWorkspaces(ds, (line) => console.log(line));
  } finally {
    await ds.destroy();
  }
  console.log(`bench:seed  done in ${((performance.now() - start) / 1000).toFixed(1)} s`);
}

main().then(() => process.exit(0), (err) => {
  console.error(`bench:seed failed: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
