import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Config, ConfigError } from './config';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

/** The per-user folder the CLI is built into: outside the repository, so fresh clones reuse it. */
export function temporalCliFolder(): string {
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'temporal-cli', 'bin');
}

function executable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && executable(path.join(dir, name))) return path.join(dir, name);
  }
  return undefined;
}

/** TEMPORAL_CLI, then `temporal` on PATH, then the per-user folder. */
export function findTemporalCli(config: Pick<Config, 'temporalCli'>): string | undefined {
  if (config.temporalCli) {
    if (!executable(config.temporalCli)) throw new ConfigError(`TEMPORAL_CLI=${config.temporalCli} is not an executable file: point it at the temporal binary, or unset it to use the one found on PATH or built by npm run temporal:install`);
    return config.temporalCli;
  }
  const cached = path.join(temporalCliFolder(), 'temporal');
  return onPath('temporal') ?? (executable(cached) ? cached : undefined);
}

/**
 * Builds the CLI with Go into the per-user folder when Go is present (the first build takes minutes;
 * Go's build cache makes later ones quick). Undefined when there is no Go: the caller then falls back
 * to the SDK's own download.
 */
export function installTemporalCli(log: (line: string) => void): string | undefined {
  if (!onPath('go')) return undefined;
  const folder = temporalCliFolder();
  fs.mkdirSync(folder, { recursive: true });
  log(`building the Temporal CLI into ${folder} (go install ${TEMPORAL_CLI_MODULE}); the first build takes minutes`);
  const result = spawnSync('go', ['install', TEMPORAL_CLI_MODULE], {
    env: { ...process.env, GOBIN: folder }, stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (result.status !== 0) throw new Error(`go install ${TEMPORAL_CLI_MODULE} failed (exit ${result.status})`);
  return path.join(folder, 'temporal');
}

export function resolveTemporalCli(config: Pick<Config, 'temporalCli'>, log: (line: string) => void): string | undefined {
  return findTemporalCli(config) ?? installTemporalCli(log);
}
