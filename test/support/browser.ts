import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Debian's chromium, installed on first use; null (with the reason) when it cannot be installed here. */
export function ensureChromium(): string | null {
  if (fs.existsSync(CHROMIUM)) return null;
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', timeout: 300_000 });
    execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'ignore', timeout: 600_000 });
  } catch (err) {
    return `chromium could not be installed: ${(err as Error).message}`;
  }
  return fs.existsSync(CHROMIUM) ? null : 'chromium is not at /usr/bin/chromium after installing';
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
