import fs from 'node:fs';
import Fastify from 'fastify';

/**
 * The baseline of `bench:render` as a process of its own: a small Fastify app serving the bytes of
 * BENCH_STATIC_FILE (a published manifest) as JSON at /bench/static. Prints `static listening on <port>`.
 */
async function main(): Promise<void> {
  const body = fs.readFileSync(process.env.BENCH_STATIC_FILE!, 'utf8');
  const port = Number(process.env.PORT);
  const app = Fastify();
  app.get('/bench/static', async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
  await app.listen({ host: '127.0.0.1', port });
  console.log(`static listening on ${port}`);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

main().catch((err) => {
  console.error(`static server: ${(err as Error).message}`);
  process.exit(1);
});
