import type { ConsoleView } from './view-kit';
import { approvalsView } from './views/approvals';
import { collectionView } from './views/collection';
import { featuresView } from './views/features';
import { keysView } from './views/keys';
import { placementsView } from './views/placements';
import { queueView } from './views/review-queue';
import { revocationsView } from './views/revocations';
import { storiesView } from './views/stories';
import { threadsView } from './views/threads';
import { webhooksView } from './views/webhooks';

/** The console's views in navigation order; the first is where a teammate lands. Names are the paths under /console/. */
export const CONSOLE_VIEWS = {
  queue: queueView,
  stories: storiesView,
  revocations: revocationsView,
  threads: threadsView,
  features: featuresView,
  keys: keysView,
  webhooks: webhooksView,
  placements: placementsView,
  approvals: approvalsView,
  collection: collectionView,
} satisfies Record<string, ConsoleView>;

export type ViewName = keyof typeof CONSOLE_VIEWS;
