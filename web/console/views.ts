import type { ConsoleView } from './view-kit';
import { keysView } from './views/keys';
import { queueView } from './views/review-queue';
import { revocationsView } from './views/revocations';
import { webhooksView } from './views/webhooks';

/** The console's views in navigation order; the first is where a teammate lands. Names are the paths under /console/. */
export const CONSOLE_VIEWS = {
  queue: queueView,
  revocations: revocationsView,
  keys: keysView,
  webhooks: webhooksView,
} satisfies Record<string, ConsoleView>;

export type ViewName = keyof typeof CONSOLE_VIEWS;
