import { CollectionDraft } from './collection-draft';
import { CollectionMedia } from './collection-media';
import { CollectionUpload } from './collection-upload';
import { CollectionDomain } from './collection-domain';
import { CollectionFlow } from './collection-flow';
import { CollectionFlowVersion } from './collection-flow-version';
import { CollectionQuestion } from './collection-question';
import { CollectionQuestionVersion } from './collection-question-version';
import { CollectionWelcomeVideo } from './collection-welcome-video';
import { ConsentTemplate } from './consent-template';
import { ConsentTemplateVersion } from './consent-template-version';
import { ProofCorrection } from './proof-correction';
import { ProofOpportunity } from './proof-opportunity';
import { ProofRequest } from './proof-request';
import { ProofRouting } from './proof-routing';
import { ConsentGrant } from './consent-grant';
import { EndUser } from './end-user';
import { Environment } from './environment';
import { Feature } from './feature';
import { FeatureFollow } from './feature-follow';
import { FeatureSignalLink } from './feature-signal-link';
import { FeatureVote } from './feature-vote';
import { IdempotencyRecord } from './idempotency-record';
import { IdentityNonce } from './identity-nonce';
import { InboxItem } from './inbox-item';
import { IntakeLimit } from './intake-limit';
import { Organization } from './organization';
import { OutboxEvent } from './outbox-event';
import { Product } from './product';
import { ProofAiOperation } from './proof-ai-operation';
import { ProofApprovalRequest } from './proof-approval-request';
import { ProofEvent } from './proof-event';
import { ProofAsset } from './proof-asset';
import { ProofItem } from './proof-item';
import { ProofPlacement } from './proof-placement';
import { ProofPlacementItem } from './proof-placement-item';
import { ProofRevocation } from './proof-revocation';
import { ProofVersion } from './proof-version';
import { RateLimitWindow } from './rate-limit-window';
import { Release } from './release';
import { ReleaseReceipt } from './release-receipt';
import { ServiceKey } from './service-key';
import { Signal } from './signal';
import { Teammate } from './teammate';
import { TeammateSession } from './teammate-session';
import { WebhookAttempt } from './webhook-attempt';
import { WebhookDelivery } from './webhook-delivery';
import { WebhookEndpoint } from './webhook-endpoint';
import { Thread } from './thread';
import { ThreadMessage } from './thread-message';
import { ProofValueEvent } from './proof-value-event';
import { ProofMoment } from './proof-moment';
import { ProofHook } from './proof-hook';
import { ProofStripeConnection } from './proof-stripe-connection';
import { ProofProcessorEvent } from './proof-processor-event';
import { ProofReward } from './proof-reward';
import { ProofCrmDeal } from './proof-crm-deal';
import { ProofBrandMention } from './proof-brand-mention';
import { ProofSource } from './proof-source';
import { ProofHealthFinding } from './proof-health-finding';
import { WorkflowCommand } from './workflow-command';
import { Room } from './room';
import { RoomMember } from './room-member';
import { RoomMessage } from './room-message';
import { RoomEvent } from './room-event';
import { RoomAgentRun } from './room-agent-run';
import { RoomApproval } from './room-approval';
import { RoomCanvasVersion } from './room-canvas-version';
import { RoomDocument } from './room-document';
import { RoomKnowledge } from './room-knowledge';
import { RoomJob } from './room-job';
import { RoomPromise } from './room-promise';
import { RoomSolveParticipant, RoomSolveSession } from './room-solve-session';
import { RoomHandoff } from './room-handoff';
import { RoomReaction } from './room-reaction';
import { RoomAttachment } from './room-attachment';
import { RoomPoll } from './room-poll';
import { RoomPollResponse } from './room-poll-response';
import { RoomModerationCase } from './room-moderation-case';
import { RoomModerationReport } from './room-moderation-report';
import { RoomAppeal } from './room-appeal';

export {
  Environment, IdempotencyRecord, IdentityNonce, Organization, OutboxEvent, Product, RateLimitWindow,
  ServiceKey, Teammate, TeammateSession, WebhookAttempt, WebhookDelivery, WebhookEndpoint,
};
export { ConsentGrant, ProofApprovalRequest, ProofEvent, ProofItem, ProofRevocation, ProofVersion };
export {
  EndUser, Feature, FeatureFollow, FeatureSignalLink, FeatureVote, InboxItem, IntakeLimit, Release, ReleaseReceipt,
  Signal, Thread, ThreadMessage,
};
export { ProofAsset, ProofPlacement, ProofPlacementItem, WorkflowCommand };
export {
  ProofValueEvent, ProofMoment, ProofHook, ProofStripeConnection,
  ProofProcessorEvent, ProofReward, ProofCrmDeal, ProofBrandMention, ProofSource, ProofHealthFinding,
};
export { ProofAiOperation };
export { Room, RoomMember, RoomMessage, RoomEvent, RoomAgentRun, RoomApproval, RoomCanvasVersion, RoomDocument, RoomKnowledge };
export { RoomJob, RoomPromise, RoomSolveSession, RoomSolveParticipant, RoomHandoff };
export { RoomReaction, RoomAttachment, RoomPoll, RoomPollResponse, RoomModerationCase, RoomModerationReport, RoomAppeal };
export { CollectionDraft, CollectionMedia, CollectionUpload };
export {
  CollectionDomain, CollectionFlow, CollectionFlowVersion, CollectionQuestion, CollectionQuestionVersion,
  CollectionWelcomeVideo, ConsentTemplate, ConsentTemplateVersion, ProofCorrection, ProofOpportunity, ProofRequest,
  ProofRouting,
};

export const ENTITIES = [
  Organization, Product, Environment, Teammate, TeammateSession, ServiceKey, IdempotencyRecord,
  RateLimitWindow, IdentityNonce, OutboxEvent, WebhookEndpoint, WebhookDelivery, WebhookAttempt,
  ProofItem, ProofVersion, ConsentGrant, ProofApprovalRequest, ProofRevocation, ProofEvent,
  EndUser, Thread, ThreadMessage, Signal, Feature, FeatureSignalLink, FeatureVote, FeatureFollow, Release,
  ReleaseReceipt, InboxItem, IntakeLimit,
  ProofPlacement, ProofPlacementItem, ProofAsset, WorkflowCommand,
  ProofValueEvent, ProofMoment, ProofHook, ProofStripeConnection,
  ProofProcessorEvent, ProofReward, ProofCrmDeal, ProofBrandMention, ProofSource, ProofHealthFinding,
  ProofAiOperation,
  CollectionDraft, CollectionUpload, CollectionMedia,
  ConsentTemplate, ConsentTemplateVersion, CollectionQuestion, CollectionQuestionVersion, CollectionFlow,
  CollectionFlowVersion, CollectionDomain, CollectionWelcomeVideo, ProofRequest, ProofOpportunity, ProofRouting,
  ProofCorrection,
  Room, RoomMember, RoomMessage, RoomEvent, RoomAgentRun, RoomApproval, RoomCanvasVersion, RoomDocument, RoomKnowledge,
  RoomJob, RoomPromise, RoomSolveSession, RoomSolveParticipant, RoomHandoff,
  RoomReaction, RoomAttachment, RoomPoll, RoomPollResponse, RoomModerationCase, RoomModerationReport, RoomAppeal,
];
