import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Browser, Page, chromium } from 'playwright-core';

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

/** Chromium with its fake camera, microphone and screen, granted without a prompt (recording tests). */
export async function launchChromiumWithMedia(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
  });
}

/** The phone every customer page is built for first (PAGES.md §8: 390×844). */
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

export interface AxeViolation { id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }

/**
 * axe-core's serious and critical violations on the page as it is now. The script is evaluated through the
 * DevTools protocol, which the page's Content-Security-Policy does not govern, so the page keeps its real CSP.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Fails with the violations when axe-core finds anything serious or critical on the page, naming `what` was checked. */
export async function assertAxeClean(page: Page, what: string): Promise<void> {
  const violations = await seriousViolations(page);
  assert.deepEqual(violations, [], `${what}: ${JSON.stringify(violations)}`);
}

/** Where browser tests leave the screenshots the docs show. */
export const SCREENSHOTS = path.join(__dirname, '..', '..', 'docs', 'screenshots');

/** A desktop window, for the teammates' console. */
export const WIDE = { viewport: { width: 1100, height: 800 } };

/** Page-side errors (script exceptions and console errors), collected for a test to assert there are none. */
export function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  return errors;
}
