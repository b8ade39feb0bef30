import autocannon from 'autocannon';

/** What one round of load asks for: see `loadRound` in bench/load.ts. */
export interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Each request's body: `{n}` becomes a number no other request of the run has, `{u}` one of 500 (an end user, say). */
  body?: string;
  /** Authorization values taken in turn, one a request (load spread over several keys). */
  authorizations?: string[];
}

/**
 * The load generator, a process of its own (bench/load.ts starts it): autocannon, which costs little per request,
 * so that a fast baseline is not capped by the benchmark's own HTTP client. Prints autocannon's JSON result.
 */
async function main(): Promise<void> {
  const spec = JSON.parse(process.env.BENCH_LOAD_SPEC ?? '') as LoadSpec;
  let n = Number(process.env.BENCH_LOAD_OFFSET ?? 0);
  const varies = /\{[nu]\}/.test(spec.body ?? '') || (spec.authorizations?.length ?? 0) > 1;
  // One authorization for every request goes with the headers, as a varying one goes with each request.
  const only = !varies && spec.authorizations?.length === 1 ? { authorization: spec.authorizations[0] } : {};
  const result = await autocannon({
    url: spec.url, connections: spec.connections, duration: spec.seconds, method: spec.method ?? 'GET',
    headers: { ...spec.headers, ...only }, body: varies ? undefined : spec.body,
    requests: varies ? [{
      setupRequest: (request) => {
        n += 1;
        const auth = spec.authorizations?.[n % spec.authorizations.length];
        return {
          ...request, body: spec.body?.replaceAll('{n}', String(n)).replaceAll('{u}', String(n % 500)),
          headers: { ...request.headers, ...(auth ? { authorization: auth } : {}) },
        };
      },
    }] : undefined,
  });
  process.stdout.write(JSON.stringify(result));
}

main().catch((err) => {
  console.error(`load generator failed: ${(err as Error).message}`);
  process.exit(1);
});
