import { randomBytes } from 'node:crypto';
import { FastifyInstance } from 'fastify';
import { Browser, BrowserContext, Page } from 'playwright-core';
import { issueSignInLink } from '../../db/platform/sign-in-links';
import { createTeammate } from '../../db/platform/tenancy';
import { WIDE, collectPageErrors, launchChromium } from './browser';
import { listenOnLoopback } from './fixtures';
import { ctx } from './root-hooks';

/** A console tab of `context` signed in as the teammate through a sign-in link (console.test.ts covers the mailed one). */
export async function consoleTab(context: BrowserContext, base: string, teammateId: string): Promise<Page> {
  const tab = await context.newPage();
  await tab.goto((await issueSignInLink(ctx.dataSource, teammateId, `${base}/console`)).url);
  await tab.waitForSelector('header.console #sign-out');
  return tab;
}

/** A new teammate of the role in the organization, and a console tab signed in as them in a desktop window of its own. */
export async function consoleTabAs(
  browser: Browser, base: string, organizationId: string, role: 'owner' | 'admin' | 'member',
): Promise<{ context: BrowserContext; page: Page }> {
  const teammate = await createTeammate(ctx.dataSource, { organizationId, email: `${role}-${randomBytes(4).toString('hex')}@team.example`, role });
  const context = await browser.newContext({ ...WIDE, acceptDownloads: true });
  return { context, page: await consoleTab(context, base, teammate.id) };
}

/** The paths a tab was answered 404 for, collected for a test to assert there are none it did not expect. */
export function collectNotFound(page: Page): string[] {
  const paths: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404) paths.push(new URL(r.url()).pathname);
  });
  return paths;
}

export interface ConsoleHarness {
  app: FastifyInstance;
  base: string;
  browser: Browser;
  /** The owner's console tab, watched for page errors and 404s. */
  page: Page;
  errors: string[];
  notFound: string[];
  close: () => Promise<void>;
}

/**
 * The app listening on loopback, Chromium, and an owner of the organization signed in to the console: `ownerId`,
 * or a new one.
 */
export async function openConsoleAsOwner(organizationId: string, ownerId?: string): Promise<ConsoleHarness> {
  const app = await ctx.buildApp({ signInPerAddressPerMinute: 100_000 });
  const base = await listenOnLoopback(app);
  const browser = await launchChromium();
  const page = ownerId
    ? await consoleTab(await browser.newContext({ ...WIDE, acceptDownloads: true }), base, ownerId)
    : (await consoleTabAs(browser, base, organizationId, 'owner')).page;
  return {
    app, base, browser, page, errors: collectPageErrors(page), notFound: collectNotFound(page),
    close: async () => {
      await browser.close();
      await app.close();
    },
  };
}
