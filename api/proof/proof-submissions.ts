import { array, boolean, string } from 'yup';
import { PROOF_TYPES } from '../../db/entities/proof-item';
import { PROOF_CHANNELS } from '../../db/rules/proof-eligibility';
import { submitProof } from '../../db/proof/proof-submissions';
import { completeIdempotencyKey } from '../../db/platform/idempotency';
import { keyPrincipal } from '../plugins/auth';
import { productTenant } from '../plugins/product-tenant';
import type { AppDeps } from '../app-deps';
import { CEILING_OR_RATE, dataOf, errorOf } from '../plugins/responses';
import { submissionSchema } from './schemas';
import { proofContentSchema } from './proof-content';
import { isoDateTime, RouteApp, strictObject } from '../plugins/validation';
import { PROOF_API_ROUTE } from '../plugins/route-traits';

export const DISPLAY_MODES = ['full_name', 'first_name', 'initials', 'anonymous'] as const;
export const IDENTITY_FIELDS = ['name', 'company', 'title', 'photo', 'logo', 'location'] as const;
export const CONSENT_MEDIA = ['text', 'audio', 'video', 'image'] as const;

/** The terms a customer agreed to; shared by submissions and the workspace's consent records. */
export const consentTermsSchema = strictObject({
  displayMode: string().required().oneOf([...DISPLAY_MODES]),
  identityFields: array(string().required().oneOf([...IDENTITY_FIELDS])).required().max(IDENTITY_FIELDS.length),
  channels: array(string().required().oneOf([...PROOF_CHANNELS])).required().min(1).max(PROOF_CHANNELS.length),
  products: strictObject({ all: boolean(), ids: array(string().required().max(100)).min(1).max(100) }).required()
    .test('all-or-ids', 'products is either {"all": true} or {"ids": [...]}',
      (v) => v == null || (v.all === true && v.ids === undefined) || (v.all === undefined && v.ids !== undefined)),
  media: array(string().required().oneOf([...CONSENT_MEDIA])).required().min(1).max(CONSENT_MEDIA.length),
  paidUseAllowed: boolean().required(),
  translationAllowed: boolean().required(),
  geography: array(string().required().matches(/^(\*|[A-Z]{2})$/, 'must be "*" or an ISO 3166-1 alpha-2 code')).required().min(1).max(250),
  validUntil: isoDateTime().nullable(),
  customerApprovedWording: boolean().required(),
}).required();

const submissionBody = strictObject({
  type: string().required().oneOf([...PROOF_TYPES]),
  content: proofContentSchema,
  customer: strictObject({
    personRef: string().min(1).max(200),
    email: string().email().max(320),
    name: string().min(1).max(200).matches(/\S/, 'must not be only spaces'),
  }).default(undefined),
  consent: consentTermsSchema,
  incentive: strictObject({ offered: boolean().required(), description: string().min(1).max(500) }).default(undefined),
  verification: strictObject({ state: string().required().oneOf(['verified_customer', 'unverified'] as const) }).default(undefined),
}).required();

/** Headless capture: stored first, always; the Idempotency-Key makes retries create one item. */
export async function proofSubmissionRoutes(app: RouteApp, deps: AppDeps): Promise<void> {
  app.post('/api/v1/proof/submissions', {
    schema: {
      body: submissionBody,
      response: {
        201: dataOf(submissionSchema),
        429: errorOf(CEILING_OR_RATE),
      },
    },
    config: {
      tag: 'proof', ...PROOF_API_ROUTE,
      operationId: 'submitProof',
      auth: 'key', scope: 'service:proof:submissions:write', idempotency: 'required', idempotencyReuseCode: 'CONFLICT',
      summary: 'Store a customer submission with its original version and consent grant',
    },
  }, async (request, reply) => {
    const key = keyPrincipal(request);
    const claim = request.idempotency;
    const data = await submitProof(deps.dataSource, {
      ...productTenant(request), keyId: key.id, ip: request.ip,
      monthlyAllowance: deps.config.proofMonthlySubmissionAllowance, dailyCeiling: deps.config.dailySubmissionCeiling,
    }, request.body, claim ? (em, result) => completeIdempotencyKey(em, claim, 201, JSON.stringify({ data: result })) : undefined);
    return reply.code(201).send({ data });
  });
}
