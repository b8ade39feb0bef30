import { VALUE_EVENT_TYPES } from '../../db/rules/value-events';

/** The automation catalog shipped with the service: what tools can listen to, call, and ready-made recipes. */

function sample(type: string, properties: Record<string, unknown>, ids: { proofItemId?: string } = {}) {
  return {
    id: 'evt_pev_0000000000example', type, createdAt: '2026-01-01T00:00:00.000Z', organizationId: 'org_example', productId: 'prd_example',
    data: {
      eventVersion: 1, proofEventId: 'pev_0000000000example', ledgerEventType: type, occurredAt: '2026-01-01T00:00:00.000Z',
      emittedAt: '2026-01-01T00:00:01.000Z', actor: { type: 'system', id: null }, productId: 'prd_example',
      proofItemId: ids.proofItemId ?? null, placementId: null, assetId: null,
      fetchUrl: ids.proofItemId ? `/api/v1/proof/items/${ids.proofItemId}` : '/api/v1/proof/events?eventId=pev_0000000000example',
      properties,
    },
  };
}

const TRIGGERS: Array<[string, string, string, Record<string, unknown>, string?]> = [
  ['proof.opportunity.created', 'Ask candidate proposed', 'A value moment opened an ask candidate; a person decides whether to ask.',
    { opportunityId: 'opp_example', momentId: 'mom_example', strength: 80 }],
  ['proof.moment.detected', 'Value moment detected', 'A value event scored at or above the moment threshold.',
    { momentId: 'mom_example', valueEventId: 've_example', type: 'milestone', strength: 80 }],
  ['proof.request.sent', 'Story request sent', 'A person sent an ask to a customer.', { requestId: 'preq_example' }],
  ['proof.reply.captured', 'Reply captured', 'A customer replied to an ask by e-mail; a draft awaits review.', { requestId: 'preq_example' }, 'pit_example'],
  ['proof.reward.issued', 'Reward issued', 'A participation reward was approved and issued, or a feature unlock was confirmed.',
    { rewardId: 'rwd_example', kind: 'gift_card' }],
  ['proof.reward.feature_unlock', 'Feature unlock approved', 'Switch properties.unlockKey on for properties.personRef, then confirm the reward.',
    { rewardId: 'rwd_example', unlockKey: 'beta.reports', personRef: 'cus_123', endUserId: null }],
  ['proof.consent.revoked', 'Consent revoked', 'The customer withdrew permission; remove copies outside the service.',
    { consentGrantId: 'cg_example', revocationId: 'rev_example' }, 'pit_example'],
  ['proof.health.warning', 'Health warning', 'A health check found something to fix.',
    { check: 'consent_expiring', consentGrantId: 'cg_example', dueAt: '2026-01-10T00:00:00.000Z' }, 'pit_example'],
  ['proof.brand_mention.created', 'Brand mention found', 'A public mention of the product was recorded.', { brandMentionId: 'bm_example', platform: 'g2' }],
  ['proof.response.submitted', 'Response submitted', 'A customer submitted a story or survey response; it is stored before routing.',
    { itemType: 'text', versionId: 'pver_example', overLimit: false }, 'prf_example'],
  ['proof.consent.granted', 'Consent granted', 'The customer approved exact wording and usage.',
    { consentGrantId: 'cg_example', versionId: 'pver_example', channels: ['website'] }, 'prf_example'],
  ['proof.item.approved', 'Story approved', 'A teammate approved a story internally.', { versionId: 'pver_example', versionNumber: 1 }, 'prf_example'],
  ['proof.asset.ready', 'Asset ready', 'A generated asset is ready for review.',
    { assetType: 'quote_card', format: 'square', sourceVersionIds: ['pver_example'] }, 'prf_example'],
  ['proof.placement.published', 'Placement published', 'A placement was published.', { renderCacheVersion: 2, eligibleCount: 5, excludedCount: 0 }],
  ['proof.request.opted_out', 'Opted out of requests', 'A customer opted out of story requests; suppress asks elsewhere too.', {}],
  ['proof.response.routed', 'Response routed', 'A scored response was routed to its follow-up; every band included.', {}, 'prf_example'],
];

const valueEventSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['eventId', 'type', 'occurredAt'],
  anyOf: [{ required: ['personRef'] }, { required: ['endUserId'] }],
  properties: {
    eventId: { type: 'string', pattern: '^[A-Za-z0-9._:-]{8,200}$' },
    type: { enum: [...VALUE_EVENT_TYPES] },
    occurredAt: { type: 'string', format: 'date-time' },
    personRef: { type: 'string', minLength: 1, maxLength: 200 },
    endUserId: { type: 'string', minLength: 1, maxLength: 200 },
    properties: {
      type: 'object', maxProperties: 50,
      additionalProperties: { anyOf: [{ type: 'string', maxLength: 1000 }, { type: 'number' }, { type: 'boolean' }, { type: 'null' }] },
    },
  },
};

const ACTIONS = [
  {
    key: 'record_value_event', name: 'Record a value event', description: 'Report a verified value moment through a hook URL; it only proposes an ask ' +
      'candidate.',
    method: 'POST', path: '/api/public/proof/hooks/{token}', auth: 'hook_token', scope: null, bodySchema: valueEventSchema,
  },
  {
    key: 'confirm_reward', name: 'Confirm a feature unlock', description: 'Tell the service the product switched the unlock on; idempotent.',
    method: 'POST', path: '/api/v1/proof/rewards/{id}/confirm', auth: 'service_key', scope: 'service:proof:write',
    bodySchema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', additionalProperties: false, properties: {} },
  },
  {
    key: 'draft_request', name: 'Draft a story request', description: 'Create a draft request; sending it needs a person.',
    method: 'POST', path: '/api/v1/proof/requests', auth: 'service_key', scope: 'service:proof:write',
    bodySchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', additionalProperties: false, required: ['channel'],
      properties: {
        channel: { enum: ['link', 'email', 'in_app', 'room', 'support', 'survey', 'api'] },
        recipientId: { type: 'string' }, opportunityId: { type: 'string' }, formId: { type: 'string' },
        message: { type: 'string', maxLength: 4000 },
      },
    },
  },
];

const TEMPLATES = [
  {
    key: 'zendesk-ticket-solved', name: 'Zendesk: ticket solved → value event', tool: 'zapier',
    source: { app: 'zendesk', event: 'ticket.solved' }, trigger: null, action: 'record_value_event',
    mapping: { eventId: 'zendesk:{{ticket.id}}:solved', type: 'resolved_ticket', occurredAt: '{{ticket.updated_at}}',
      personRef: '{{ticket.requester.external_id}}', 'properties.ticketId': '{{ticket.id}}' },
  },
  {
    key: 'intercom-conversation-closed', name: 'Intercom: conversation closed → value event', tool: 'make',
    source: { app: 'intercom', event: 'conversation.admin.closed' }, trigger: null, action: 'record_value_event',
    mapping: { eventId: 'intercom:{{data.item.id}}:closed', type: 'resolved_ticket', occurredAt: '{{formatDate(data.item.updated_at; "YYYY-MM-DDTHH:mm:ssZ")}}',
      personRef: '{{data.item.contacts.contacts[1].external_id}}', 'properties.ticketId': '{{data.item.id}}' },
  },
  {
    key: 'hubspot-deal-won', name: 'HubSpot: deal won → value event', tool: 'n8n',
    source: { app: 'hubspot', event: 'deal.propertyChange.dealstage=closedwon' }, trigger: null, action: 'record_value_event',
    mapping: { eventId: 'hubspot:{{$json.objectId}}:won', type: 'milestone', occurredAt: '{{$json.occurredAt}}', personRef: '{{$json.associatedContactId}}',
      'properties.name': 'deal_won' },
  },
  {
    key: 'product-milestone', name: 'Product milestone → value event', tool: 'generic',
    source: { app: 'your-product', event: 'milestone.reached' }, trigger: null, action: 'record_value_event',
    mapping: { eventId: 'app:{{milestone.id}}', type: 'milestone', occurredAt: '{{milestone.at}}', personRef: '{{user.customerId}}',
      'properties.name': '{{milestone.name}}' },
  },
  {
    key: 'feature-unlock-confirm', name: 'Feature unlock → switch on and confirm', tool: 'generic',
    source: { app: 'service', event: 'proof.reward.feature_unlock' }, trigger: 'proof.reward.feature_unlock', action: 'confirm_reward',
    mapping: { id: '{{data.properties.rewardId}}' },
  },
];

export const AUTOMATION_CATALOG = {
  version: 1,
  triggers: TRIGGERS.map(([key, name, description, properties, proofItemId]) => ({
    key, name, description, samplePayload: sample(key, properties, { proofItemId }),
  })),
  actions: ACTIONS,
  templates: TEMPLATES,
};
