import { Foundation1763712000000 } from './1763712000000-Foundation';
import { CustomerLoop1763712100000 } from './1763712100000-CustomerLoop';
import { Webhooks1763712200000 } from './1763712200000-Webhooks';
import { ProofCore1763712300000 } from './1763712300000-ProofCore';
import { ProofPlacements1763712400000 } from './1763712400000-ProofPlacements';
import { SignalAnalysisSkipped1763712450000 } from './1763712450000-SignalAnalysisSkipped';
import { ProofAi1763712500000 } from './1763712500000-ProofAi';
import { CollectionSetup1763712600000 } from './1763712600000-CollectionSetup';
import { CollectionCustomer1763712650000 } from './1763712650000-CollectionCustomer';
import { Hardening1763712700000 } from './1763712700000-WorkflowCommandsFailuresRelayClaims';
import { Integrations1763712800000 } from './1763712800000-Integrations';
import { Performance1763712900000 } from './1763712900000-ProofRenderVersions';
import { WelcomeVideosDomainChecks1763713000000 } from './1763713000000-WelcomeVideosDomainChecks';
import { CollectionCaptionsInterviews1763713100000 } from './1763713100000-CollectionCaptionsInterviews';
import { PublicLimits1763713200000 } from './1763713200000-EngagementBeaconsOncePerDay';
import { WebhookBatches1763713300000 } from './1763713300000-WebhookBatches';
import { IntegrationsFinish1763713400000 } from './1763713400000-StreamCopiesContactPreferencesSealedPaymentSecrets';
import { Rooms1763713500000 } from './1763713500000-Rooms';
import { RoomMessageExtras1763713600000 } from './1763713600000-RoomMessageExtras';
import { RoomJobsPromises1763713700000 } from './1763713700000-RoomJobsPromises';
import { RoomOperations1763713800000 } from './1763713800000-RoomEventCompaction';
import { RoomAttachmentSweep1763714200000 } from './1763714200000-RoomAttachmentSweep';
import { ControlLinkScopes1764111000000 } from './1764111000000-ControlLinkScopes';
import { UploadQuotas1764122000000 } from './1764122000000-UploadQuotas';
import { InboxStreamLeases1764133000000 } from './1764133000000-InboxStreamLeases';
import { DomainClaims1764144000000 } from './1764144000000-DomainClaims';
import { NojsSubmissionKeys1764155000000 } from './1764155000000-NojsSubmissionKeys';
import { DuplicateFeedback1764200000000 } from './1764200000000-DuplicateFeedback';
import { ConsoleSignIn1764203000000 } from './1764203000000-ConsoleSignIn';
import { PagedReadIndexes1764205000000 } from './1764205000000-PagedReadIndexes';
import { ConsoleWorkspaceReads1764207100000 } from './1764207100000-ConsoleWorkspaceReads';
import { ScaleReadIndexes1764211000000 } from './1764211000000-ScaleReadIndexes';
import { ConsoleStoriesReads1764213000000 } from './1764213000000-ConsoleStoriesReads';

export const MIGRATIONS = [
  Foundation1763712000000, CustomerLoop1763712100000, Webhooks1763712200000, ProofCore1763712300000,
  ProofPlacements1763712400000, SignalAnalysisSkipped1763712450000, ProofAi1763712500000,
  CollectionSetup1763712600000, CollectionCustomer1763712650000, Hardening1763712700000,
  Integrations1763712800000, Performance1763712900000, WelcomeVideosDomainChecks1763713000000,
  CollectionCaptionsInterviews1763713100000, PublicLimits1763713200000, WebhookBatches1763713300000,
  IntegrationsFinish1763713400000, Rooms1763713500000, RoomMessageExtras1763713600000,
  RoomJobsPromises1763713700000, RoomOperations1763713800000, RoomAttachmentSweep1763714200000,
  ControlLinkScopes1764111000000, UploadQuotas1764122000000, InboxStreamLeases1764133000000,
  DomainClaims1764144000000, NojsSubmissionKeys1764155000000,
  DuplicateFeedback1764200000000, ConsoleSignIn1764203000000, PagedReadIndexes1764205000000,
  ConsoleWorkspaceReads1764207100000,
  ScaleReadIndexes1764211000000,
  ConsoleStoriesReads1764213000000,
];
