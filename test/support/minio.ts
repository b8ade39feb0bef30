import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeLoopbackPort as freePort } from '../../runtime/ports';

/**
 * A MinIO server for the S3 media store's tests: `MINIO_BIN`, `minio` on PATH, or the per-user build
 * (`GOBIN=~/.cache/minio-bin go install github.com/minio/minio@latest`, a long build done once).
 */
export function findMinio(): string | null {
  const candidates = [process.env.MINIO_BIN, path.join(os.homedir(), '.cache', 'minio-bin', 'minio'),
    ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'minio'))];
  return candidates.find((c): c is string => !!c && fs.existsSync(c)) ?? null;
}

export interface RunningMinio {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop: () => Promise<void>;
}

export async function startMinio(binary: string): Promise<RunningMinio> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sv-minio-'));
  const [port, consolePort] = [await freePort(), await freePort()];
  const accessKeyId = 'svtestaccess';
  const secretAccessKey = 'svtestsecret-0123456789';
  const child: ChildProcess = spawn(binary, ['server', dir, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'], {
    env: { ...process.env, MINIO_ROOT_USER: accessKeyId, MINIO_ROOT_PASSWORD: secretAccessKey, MINIO_BROWSER: 'off' },
    stdio: 'ignore',
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${endpoint}/minio/health/live`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('MinIO did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    endpoint, accessKeyId, secretAccessKey,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
