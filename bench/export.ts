import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import canonicalize from 'canonicalize';
import { Cleanup } from '../test/support/servers';
import { approvedStory, cloneStory, startProofBench } from './proof-bench';
import { residentBytes } from './service';

/**
 * `POST /api/v1/proof/exports` on a product of BENCH_STORIES (100,000) approved stories, against the service as
 * `npm start` runs it with one API process (SV_API_PROCESSES=1): the API process's resident memory is sampled every
 * 50 ms during the request. Prints the baseline (just before), the peak, the growth (target ≤ 100 MB), the duration
 * and the bytes, and verifies the digest as a client would: streamed over the bundle's bytes as they arrive, then
 * over `canonicalize(JSON.parse(body).data.bundle)` as docs/proof.md tells a recipient.
 */
const STORIES = Number(process.env.BENCH_STORIES ?? 100_000);
const SAMPLE_MS = 50;
const OPENING = '{"data":{"bundle":';

async function main(): Promise<void> {
  const cleanup: Cleanup = [];
  try {
    const bench = await startProofBench(cleanup, { SV_API_PROCESSES: '1' });
    const template = await approvedStory(bench);
    const seedStart = performance.now();
    await cloneStory(bench.ds, template, STORIES - 1, 'bx_');
    console.log(`seeded ${STORIES} approved stories in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
    const [apiPid] = bench.service.apiPids();
    if (!apiPid || bench.service.apiPids().length !== 1) throw new Error(`expected one API process, found ${bench.service.apiPids().length}`);

    const bodyFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sv-bench-export-')), 'export.json');
    cleanup.push(async () => fs.rmSync(path.dirname(bodyFile), { recursive: true, force: true }));
    const exportOnce = () => new Promise<{ status: number; bytes: number; streamedDigest: string; tail: string; ms: number }>((resolve, reject) => {
      const start = performance.now();
      const out = fs.createWriteStream(bodyFile);
      const hash = createHash('sha256');
      let head = '';
      // The bundle's bytes run from after OPENING to the last `,"digest":`; the tail is held back until then.
      let held = Buffer.alloc(0);
      let bytes = 0;
      const req = http.request(`${bench.service.base}/api/v1/proof/exports`, {
        method: 'POST', headers: { authorization: `Bearer ${bench.secret}` },
      }, (res) => {
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          out.write(chunk);
          let data = chunk;
          if (head.length < OPENING.length) {
            const need = OPENING.length - head.length;
            head += data.subarray(0, need).toString('latin1');
            data = data.subarray(need);
          }
          held = Buffer.concat([held, data]);
          if (held.length > 4096) {
            hash.update(held.subarray(0, held.length - 4096));
            held = held.subarray(held.length - 4096);
          }
        });
        res.on('end', () => out.end(() => {
          const tail = held.toString('utf8');
          const at = tail.lastIndexOf(',"digest":');
          if (res.statusCode !== 201 || head !== OPENING || at < 0) {
            resolve({ status: res.statusCode ?? 0, bytes, streamedDigest: '', tail: tail.slice(-300), ms: performance.now() - start });
            return;
          }
          hash.update(held.subarray(0, Buffer.byteLength(tail.slice(0, at))));
          resolve({ status: 201, bytes, streamedDigest: hash.digest('hex'), tail: tail.slice(at), ms: performance.now() - start });
        }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

    // One export first (JIT, pool connections), then a pause, so the baseline is the API at rest after it.
    const warm = await exportOnce();
    if (warm.status !== 201) throw new Error(`export answered ${warm.status}: ${warm.tail}`);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const baseline = residentBytes(apiPid);
    let peak = baseline;
    const sampler = setInterval(() => { peak = Math.max(peak, residentBytes(apiPid)); }, SAMPLE_MS);
    const run = await exportOnce().finally(() => clearInterval(sampler));
    peak = Math.max(peak, residentBytes(apiPid));
    if (run.status !== 201) throw new Error(`export answered ${run.status}: ${run.tail}`);

    const claimed = JSON.parse(run.tail.slice(',"digest":'.length, -2)) as { algorithm: string; canonicalization: string; value: string };
    const streamedOk = claimed.value === run.streamedDigest;
    // The recipient's check of docs/proof.md, on the saved body.
    const { bundle, digest } = JSON.parse(fs.readFileSync(bodyFile, 'utf8')).data;
    const parsedOk = createHash('sha256').update(canonicalize(bundle)!, 'utf8').digest('hex') === digest.value && digest.value === claimed.value;
    const counts = `${bundle.items.length} items, ${bundle.versions.length} versions, ${bundle.consents.length} consents`;

    const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
    console.log(`bench:export  ${STORIES} approved stories, one API process (pid ${apiPid}), RSS sampled every ${SAMPLE_MS} ms`);
    console.log(`bundle: ${counts}; ${mb(run.bytes)} in ${(run.ms / 1000).toFixed(2)} s (${mb(run.bytes / (run.ms / 1000))}/s)`);
    console.log(`API RSS: baseline ${mb(baseline)}, peak ${mb(peak)}, growth ${mb(peak - baseline)} (target <= 100 MB: ${peak - baseline <= 100 * 1024 * 1024 ? 'met' : 'NOT met'})`);
    console.log(`digest ${digest.algorithm}/${digest.canonicalization} ${digest.value}: streamed check ${streamedOk ? 'OK' : 'FAILED'}, parsed check ${parsedOk ? 'OK' : 'FAILED'}`);
    if (!streamedOk || !parsedOk || bundle.items.length !== STORIES) process.exitCode = 1;
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  }
}

main().then(() => process.exit(process.exitCode ?? 0), (err) => {
  console.error(`bench:export failed: ${(err as Error).message}`);
  process.exit(1);
});
