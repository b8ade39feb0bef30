import { array, boolean, mixed, object, string } from 'yup';
import { KEY_SCOPES } from '../../db/platform/service-keys';
import { TEAMMATE_ROLES } from '../../db/entities/teammate';
import { named, timestamp } from '../plugins/responses';

/** Response schemas of the platform routes. */

export const serviceKeySchema = named('ServiceKey', object({
  id: string().required(),
  prefix: string().required().meta({ description: 'the first characters of the key, to recognise it' }),
  organizationId: string().required(),
  productId: string().nullable().defined(),
  environment: string().required(),
  scopes: array(string().defined().oneOf([...KEY_SCOPES])).defined(),
  createdBy: string().nullable().defined(),
  createdAt: timestamp().required(),
  expiresAt: timestamp().required(),
  revokedAt: timestamp().nullable().defined(),
  lastUsedAt: timestamp().nullable().defined(),
  rotatedFromId: string().nullable().defined(),
  replacedById: string().nullable().defined(),
}), {
  id: 'key_1k82coljqfzx6f3c9zhhkdyk0', prefix: 'svk_9rzUJSJC', organizationId: 'org_1k82colhgmv28nxn0xdrzsmt1',
  productId: 'prd_1k82colhjdx2x9hngpjdk6rtq', environment: 'production', scopes: ['service:proof:read'],
  createdBy: 'tm_1k82colhtn9561t1hn3ys8paj', createdAt: '2026-11-22T19:47:10.073Z', expiresAt: '2027-05-21T19:47:10.074Z',
  revokedAt: null, lastUsedAt: null, rotatedFromId: null, replacedById: null,
});

export const issuedKeySchema = named('IssuedServiceKey', object({
  key: serviceKeySchema.defined(),
  secret: string().required().meta({ description: 'the key itself (svk_...): shown in this answer only' }),
}));

export const workspaceSessionSchema = named('WorkspaceSession', object({
  teammateId: string().required(),
  organizationId: string().required(),
  email: string().required(),
  role: string().required().oneOf([...TEAMMATE_ROLES]),
  csrfToken: string().required().meta({ description: 'send it as x-csrf-token with every write of this session' }),
}));

export const signedInSchema = named('SignedInSession', workspaceSessionSchema.shape({ expiresAt: timestamp().required() }));

export const installationSchema = named('InstallationCheck', object({
  ok: boolean().required(),
  organizationId: string().required(),
  productId: string().required(),
  endUserId: string().required(),
  tokenExpiresAt: timestamp().required(),
  nonceConsumed: boolean().required(),
}));

export const anonymousProofSchema = named('AnonymousProof', object({
  anonymousId: string().required(),
  anonymousProof: string().required().meta({ description: 'keep it with the anonymous id; POST /api/v1/identity/merge needs it after sign-in' }),
}));

export const identityMergeSchema = named('IdentityMerge', object({
  anonymousId: string().required(),
  endUserId: string().required(),
  moved: mixed().required().meta({
    jsonSchema: { type: 'object', additionalProperties: { type: 'integer' } },
    description: 'rows moved onto the signed end user, per table (signals, threads, inbox_items, feature_votes, ..., room_members, room_messages, ' +
      'room_agent_runs)',
  }),
}));

const checkState = () => string().required().oneOf(['ok', 'failed'] as const);

export const livenessSchema = named('Liveness', object({
  status: string().required().oneOf(['ok'] as const),
}));

export const healthSchema = named('Health', object({
  status: string().required().oneOf(['ok'] as const),
  checks: object({ database: checkState(), temporal: checkState() }).required(),
}));
