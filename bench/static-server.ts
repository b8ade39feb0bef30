import fs from 'node:fs';
import Fastify from 'fastify';

/**
 * The baseline of `bench:render` as a process of its own: a small Fastify app serving the bytes of
 * BENCH_STATIC_FILE (a published manifest) as JSON at /bench/static, and those of BENCH_STATIC_PAGE_FILE (a wall
 * page), when set, as HTML at /bench/page. Prints `static listening on <port>`.
 */
async function main(): Promise<void> {
  const body = fs.readFileSync(process.env.BENCH_STATIC_FILE!, 'utf8');
  const port = Number(process.env.PORT);
  const app = Fastify();
  app.get('/bench/static', async (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
  if (process.env.BENCH_STATIC_PAGE_FILE) {
    const page = fs.readFileSync(process.env.BENCH_STATIC_PAGE_FILE, 'utf8');
    app.get('/bench/page', async (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
  }
  await app.listen({ host: '127.0.0.1', port });
  console.log(`static listening on ${port}`);
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

main().catch((err) => {
  console.error(`static server: ${(err as Error).message}`);
  process.exit(1);
});
