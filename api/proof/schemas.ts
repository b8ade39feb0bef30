import { array, boolean, number, object, string } from 'yup';
import { APPROVAL_STATES } from '../../db/entities/proof-version';
import { HOST_CONTEXTS, PLACEMENT_STATES } from '../../db/entities/proof-placement';
import { PROOF_ITEM_STATUSES, PROOF_TYPES } from '../../db/entities/proof-item';
import { PLACEMENT_TYPES, PROOF_CHANNELS } from '../../db/rules/proof-eligibility';
import { anyJson, anyObject, errorOf, named, timestamp } from '../plugins/responses';

/** Response schemas of the proof routes. Free-form parts (content, diffs, render config) stay open objects. */

const id = () => string().required();
const nullableId = () => string().nullable().defined();
const strings = () => array(string().defined()).defined();

export const proofItemSchema = named('ProofItem', object({
  id: id(),
  productId: id(),
  type: string().required().oneOf([...PROOF_TYPES]),
  status: string().required().oneOf([...PROOF_ITEM_STATUSES]),
  statusReason: string().nullable().defined(),
  customerPersonId: nullableId(),
  originalVersionId: id(),
  approvedPublicVersionId: nullableId(),
  overLimit: boolean().required(),
  overLimitReasons: strings(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
}), {
  id: 'prf_1k82com61vc9as19ydsy6mehs', productId: 'prd_1k82colubyngv0apgbdzkvsmf', type: 'text', status: 'in_review',
  statusReason: null, customerPersonId: 'cus_123', originalVersionId: 'pver_1k82com619jnkkf4szjvjs0x4',
  approvedPublicVersionId: null, overLimit: false, overLimitReasons: [], createdAt: '2026-11-22T19:47:10.655Z',
  updatedAt: '2026-11-22T19:47:10.704Z',
});

export const proofVersionSchema = named('ProofVersion', object({
  id: id(),
  proofItemId: id(),
  versionNumber: number().integer().required(),
  isOriginal: boolean().required(),
  content: anyObject().required().meta({ description: 'text, title, rating, attribution, media, as submitted or derived' }),
  contentHash: string().required(),
  createdByType: string().required(),
  modelId: string().nullable().defined(),
  changeReason: string().nullable().defined(),
  parentVersionId: nullableId(),
  locale: string().nullable().defined(),
  semanticDiff: anyObject().required().meta({ description: 'what changed against the parent (empty for an original)' }),
  approvalState: string().required().oneOf([...APPROVAL_STATES]),
  createdAt: timestamp().required(),
}));

export const consentGrantSchema = named('ConsentGrant', object({
  id: id(),
  approvedVersionId: id(),
  state: string().required(),
  displayMode: string().required(),
  identityFields: strings(),
  channels: array(string().defined().oneOf([...PROOF_CHANNELS])).defined(),
  products: object({ all: boolean(), ids: array(string().defined()) }).required(),
  media: strings(),
  paidUseAllowed: boolean().required(),
  translationAllowed: boolean().required(),
  geography: strings(),
  validUntil: timestamp().nullable().defined(),
  customerApprovedWording: boolean().required(),
  receiptHash: string().nullable().defined(),
  revokedAt: timestamp().nullable().defined(),
}));

export const consentSummarySchema = named('ConsentSummary', object({
  proofItemId: id(),
  status: string().required(),
  grants: array(consentGrantSchema.defined()).defined(),
}));

export const workspaceItemSchema = named('WorkspaceProofItem', object({
  ...proofItemSchema.fields,
  excerpt: string().nullable().defined().meta({ description: 'the original\'s title, else the start of its text (140 characters at most)' }),
}));

export const workspaceItemDetailSchema = named('WorkspaceProofItemDetail', object({
  item: proofItemSchema.defined(),
  versions: array(proofVersionSchema.defined()).defined().meta({ description: 'every version, oldest first, approved or not' }),
  consent: consentSummarySchema.defined(),
}));

const expandedSchema = named('ProofItemExpansions', object({
  versions: object({ data: array(proofVersionSchema.defined()).defined(), hasMore: boolean().required() }).default(undefined),
  consent: object({ data: consentSummarySchema.defined(), hasMore: boolean().required() }).default(undefined),
}));

export const eligibilitySchema = named('ChannelEligibility', object({
  channel: string().required().oneOf([...PROOF_CHANNELS]),
  eligible: boolean().required(),
  reasons: strings(),
  grantId: nullableId(),
  identityFields: strings(),
  disclosure: string().nullable().defined(),
  labels: strings(),
}));

export const proofItemListEntrySchema = named('ProofItemListEntry', object({
  ...proofItemSchema.fields,
  expanded: expandedSchema.default(undefined).meta({ description: 'with expand=versions and/or consent' }),
}));

export const proofItemReadSchema = named('ProofItemRead', object({
  item: proofItemSchema.defined(),
  publicVersion: proofVersionSchema.nullable().defined(),
  eligibleChannels: strings(),
  eligibility: array(eligibilitySchema.defined()).defined(),
  expanded: expandedSchema.default(undefined),
}));

export const submissionSchema = named('ProofSubmission', object({
  submissionId: id(),
  proofItemId: id(),
  originalVersionId: id(),
  consentGrantId: id(),
  overLimit: boolean().required(),
  overLimitReasons: strings(),
}));

export const itemAndVersionSchema = named('ProofItemAndVersion', object({
  item: proofItemSchema.defined(),
  version: proofVersionSchema.defined(),
}));

export const approvalRequestedSchema = named('ApprovalRequested', object({
  item: proofItemSchema.defined(),
  version: proofVersionSchema.defined(),
  approvalRequestId: id(),
}));

export const reviewRequestSchema = named('ReviewRequest', object({
  id: id(),
  proofItemId: id(),
  versionId: id(),
  requestedAt: timestamp().required(),
  requestedBy: object({ type: string().required(), id: string().nullable().defined() }).required(),
  remindersSent: number().integer().required(),
  item: proofItemSchema.defined(),
  version: proofVersionSchema.defined(),
  original: proofVersionSchema.nullable().defined().meta({ description: 'the item\'s original version, beside a derivative; null when the queued version is ' +
    'the original' }),
  consent: consentSummarySchema.defined(),
}));

export const revocationFiledSchema = named('RevocationFiled', object({
  requestOnly: boolean().required().meta({ description: 'always true: a person completes the revocation' }),
  revocation: object({
    id: id(),
    resolutionState: string().required(),
    immediatePolicyAction: string().required(),
    slaDeadlineAt: timestamp().required(),
  }).required(),
}));

export const openRevocationSchema = named('OpenRevocation', object({
  id: id(),
  proofItemId: id(),
  productId: id(),
  requestText: string().nullable().defined(),
  resolutionState: string().required().oneOf(['pending', 'escalated'] as const),
  immediatePolicyAction: string().required(),
  slaDeadlineAt: timestamp().required(),
  requestedBy: object({ type: string().required(), id: string().nullable().defined() }).required(),
  createdAt: timestamp().required(),
  listedIn: array(object({ placementId: id(), name: string().required(), state: string().required() })).defined()
    .meta({ description: 'placements (not archived) that still list the item until the revocation is completed' }),
}));

export const deletedItemSchema = named('ProofItemDeletion', object({
  item: proofItemSchema.defined(),
  deletedAt: timestamp().nullable().defined(),
  recoveryClosesAt: timestamp().nullable().defined(),
}));

export const assetSchema = named('ProofAsset', object({
  id: id(),
  assetType: string().required(),
  sourceProofIds: strings(),
  sourceVersionIds: strings(),
  templateId: string().required(),
  brandKitVersion: string().nullable().defined(),
  approvalState: string().required(),
  channelEligibility: strings(),
  files: strings(),
  content: anyObject().required().meta({ description: 'quote, theme, format, sha256, channel, disclosure, attribution, mediaType, svg' }),
  createdAt: timestamp().required(),
}));

export const workspaceAssetSchema = named('WorkspaceProofAsset', object({
  ...assetSchema.fields,
  productId: id(),
}));

export const placementSchema = named('Placement', object({
  id: id(),
  productId: id(),
  name: string().required(),
  placementType: string().required().oneOf([...PLACEMENT_TYPES]),
  channel: string().required().oneOf([...PROOF_CHANNELS]),
  hostContext: string().required().oneOf([...HOST_CONTEXTS]),
  locale: string().nullable().defined(),
  geography: string().nullable().defined(),
  state: string().required().oneOf([...PLACEMENT_STATES]),
  renderCacheVersion: number().integer().required(),
  renderConfig: anyObject().required(),
  eligibilityPolicy: anyObject().required(),
  publishedAt: timestamp().nullable().defined(),
  createdAt: timestamp().required(),
  updatedAt: timestamp().required(),
}));

const placementItemFields = {
  id: id(),
  proofItemId: id(),
  versionId: nullableId(),
  position: number().integer().required(),
  state: string().required(),
  removedReason: string().nullable().defined(),
};

const liveDecision = {
  eligible: boolean().required(),
  reasons: strings(),
  disclosure: string().nullable().defined(),
};

export const placementItemSchema = named('PlacementItem', object({ ...placementItemFields, ...liveDecision }));

export const removedPlacementItemSchema = named('RemovedPlacementItem', object(placementItemFields));

export const placementItemWithEngagementSchema = named('PlacementItemWithEngagement', object({
  ...placementItemFields,
  ...liveDecision,
  engagement: anyJson().meta({ jsonSchema: { type: 'object', additionalProperties: { type: 'integer' } }, description: 'counts per engagement type' }),
}));

export const placementReadSchema = named('PlacementRead', object({
  ...placementSchema.fields,
  expanded: object({
    items: object({ data: array(placementItemSchema.defined()).defined(), hasMore: boolean().required() }).required(),
  }).default(undefined).meta({ description: 'with expand=items' }),
}));

export const workspacePlacementSchema = named('WorkspacePlacement', object({
  ...placementSchema.fields,
  itemCount: number().integer().required().meta({ description: 'items the placement lists now (eligible or not)' }),
}));

export const publishResultSchema = named('PlacementPublication', object({
  placement: placementSchema.defined(),
  eligibleCount: number().integer().required(),
  excludedCount: number().integer().required(),
}));

const signatureSchema = named('Ed25519Signature', object({
  alg: string().required().oneOf(['EdDSA'] as const),
  kid: string().required(),
  value: string().required().meta({ description: 'base64url signature over the canonical JSON (RFC 8785) of the signed object' }),
}));

export const renderManifestSchema = named('SignedRenderManifest', object({
  manifest: object({
    schema: string().required().oneOf(['service-proof-render-v1'] as const),
    canonicalization: string().required().oneOf(['RFC8785'] as const).meta({ description: 'the signature is over the RFC 8785 canonical JSON of manifest' }),
    expiresAt: timestamp().required().meta({ description: 'end of the event tokens\' last valid day; a wall shows nothing from a manifest past it' }),
    placement: anyObject().required(),
    items: array(anyObject()).defined().meta({ description: 'eligible items with content, attribution, labels, media ({assetId, kind, url}), receiptId and ' +
      'eventToken' }),
  }).required(),
  signature: signatureSchema.defined(),
}));

export const receiptSchema = named('SignedReceipt', object({
  receipt: anyObject().required().meta({ description: 'service-proof-receipt-v1: terms, contentHash, versions, grant' }),
  signature: signatureSchema.defined(),
}));

export const receiptVerificationSchema = named('ReceiptVerification', object({
  signatureValid: boolean().required(),
  status: string().nullable().defined(),
  valid: boolean().required(),
  checkedAt: timestamp().required(),
}));

export const keySetSchema = named('ReceiptKeySet', object({
  keys: array(object({
    kty: string().required(), crv: string().required(), x: string().required(), kid: string().required(),
    use: string().required(), alg: string().required(), status: string().required(),
  })).defined(),
}));

export const exportSchema = named('ProofExport', object({
  bundle: anyObject().required().meta({ description: 'service-proof-export-v1 (or -raw-export-v1): items, versions, consents, placements' }),
  digest: object({ algorithm: string().required(), canonicalization: string().required(), value: string().required() }).required(),
}));

export const proofEventSchema = named('ProofLedgerEvent', object({
  id: id(),
  eventType: string().required(),
  productId: id(),
  placementId: nullableId(),
  proofItemId: nullableId(),
  assetId: nullableId(),
  actor: object({ type: string().required(), id: string().nullable().defined() }).required(),
  timestamp: timestamp().required(),
  properties: anyObject().required(),
}));

/** Refusals several routes document alike. */
export const PLACEMENT_ARCHIVED = errorOf('CONFLICT: the placement is archived');
