import Fastify, { FastifyReply, FastifyRequest } from 'fastify';
import { registerAuth } from '../api/plugins/auth';
import { registerErrorHandling } from '../api/plugins/errors';
import { createDataSource } from '../db/data-source';
import { newId } from '../db/rules/ids';
import { loadConfig } from '../runtime/config';

/**
 * The baseline of `bench:signals` as a process of its own, like the API it is compared with: a bare
 * Fastify app whose route does one `INSERT ... jsonb` into BENCH_TABLE on the same PostgreSQL (the
 * service's default pool of 10 connections), and the same route behind the service's key check and
 * rate limit, so that the benchmark can tell what the key costs from what intake costs. Prints
 * `bare listening on <port>`.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const table = process.env.BENCH_TABLE!;
  const ds = createDataSource(config.databaseUrl!);
  await ds.initialize();
  const app = Fastify();
  registerErrorHandling(app);
  registerAuth(app, ds, config);
  const insert = async (request: FastifyRequest, reply: FastifyReply) => {
    await ds.query(`INSERT INTO ${table} (id, body) VALUES ($1, $2::jsonb)`, [newId('row'), JSON.stringify(request.body)]);
    return reply.code(201).send({ data: { ok: true } });
  };
  app.post('/bench/bare-insert', insert);
  app.post('/api/v1/bench/bare-insert', { config: { auth: 'key', scope: 'service:signals:write' } }, insert);
  await app.listen({ host: '127.0.0.1', port: config.port });
  console.log(`bare listening on ${config.port}`);
  process.on('SIGTERM', () => void app.close().then(() => ds.destroy()).then(() => process.exit(0)));
}

main().catch((err) => {
  console.error(`bare insert server: ${(err as Error).message}`);
  process.exit(1);
});
