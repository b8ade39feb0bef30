import { execFile } from 'node:child_process';
import path from 'node:path';
import type { LoadSpec } from './load-generator';

const GENERATOR = path.join(__dirname, 'load-generator.ts');

export interface LoadResult {
  /** Answers with the expected status per second over the round. */
  perSecond: number;
  p50: number;
  p99: number;
  /** Answers with another status, connection errors and timeouts. */
  unexpected: number;
}

let offset = 0;

/**
 * One round of load from autocannon in a process of its own (bench/load-generator.ts): `connections`
 * keep-alive connections with one request in flight each, for `seconds`. Bodies numbered `{n}` never repeat a
 * number across the rounds of one benchmark run.
 */
export function loadRound(spec: LoadSpec & { expect: number }): Promise<LoadResult> {
  const start = offset;
  offset += 10_000_000;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', GENERATOR], {
      env: { ...process.env, BENCH_LOAD_SPEC: JSON.stringify(spec), BENCH_LOAD_OFFSET: String(start) }, maxBuffer: 64 * 1024 * 1024,
    }, (err, stdout) => {
      if (err) return reject(err);
      const r = JSON.parse(stdout) as {
        duration: number; errors: number; timeouts: number; latency: { p50: number; p99: number };
        statusCodeStats?: Record<string, { count: number }>;
      };
      const counts = r.statusCodeStats ?? {};
      const expected = counts[String(spec.expect)]?.count ?? 0;
      const all = Object.values(counts).reduce((sum, c) => sum + c.count, 0);
      resolve({ perSecond: expected / r.duration, p50: r.latency.p50, p99: r.latency.p99, unexpected: all - expected + r.errors + r.timeouts });
    });
  });
}
