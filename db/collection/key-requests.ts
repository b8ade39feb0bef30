import { DataSource, EntityManager } from 'typeorm';
import { ServiceError, conflict, validationFailed } from '../../runtime/service-error';
import { CollectionFlow, ProofOpportunity, ProofRequest } from '../entities';
import { RequestChannel, RequestRecipient } from '../entities/proof-request';
import { messagePolicyFailures } from '../rules/ai-ask-policy';
import { lockProposedOpportunity, recordOpportunityDecision } from '../integrations/opportunities';
import { insertDraftRequest, recipientIssue, recipientSuppressed } from './requests';

/** `POST /api/v1/proof/requests` (docs/ai.md#requests-and-reply-capture): the spec's body, the tenant from the key. */
export interface KeyRequestBody {
  channel: RequestChannel;
  recipientId?: string;
  opportunityId?: string;
  formId?: string;
  message?: string;
}

/** Channels that reach one named person, so they need to know who. */
const NAMED_CHANNELS: readonly RequestChannel[] = ['email', 'in_app', 'room', 'support'];

const missing = (path: string, what: string) => new ServiceError('NOT_FOUND', `${what} not found`, [{ path, message: `no such ${what}` }]);

/** The product's flow whose live version was published last. */
async function latestLiveFlow(em: EntityManager, productId: string): Promise<string | null> {
  const [row] = await em.query(
    `SELECT f.id FROM collection_flows f JOIN collection_flow_versions v ON v.id = f.live_version_id
      WHERE f.product_id = $1 AND f.state = 'live' ORDER BY v.published_at DESC, f.id DESC LIMIT 1`, [productId]);
  return row?.id ?? null;
}

/**
 * Who `recipientId` is. An id of a known end user (or any id on the in-app channel, which is addressed by
 * end user) is that end user, with the e-mail and name the product told us; any other id is a person
 * reference, whose e-mail is the newest one they left on a story.
 */
async function recipientOf(em: EntityManager, productId: string, channel: RequestChannel, recipientId: string): Promise<RequestRecipient> {
  const [user] = await em.query('SELECT email, name FROM end_users WHERE product_id = $1 AND end_user_id = $2', [productId, recipientId]);
  if (user || channel === 'in_app') {
    return { endUserId: recipientId, ...(user?.email ? { email: user.email } : {}), ...(user?.name ? { name: user.name } : {}) };
  }
  const [person] = await em.query(
    `SELECT customer_email, customer_name FROM proof_items
      WHERE product_id = $1 AND customer_person_id = $2 AND customer_email IS NOT NULL ORDER BY created_at DESC LIMIT 1`, [productId, recipientId]);
  return { personRef: recipientId, ...(person ? { email: person.customer_email } : {}), ...(person?.customer_name ? { name: person.customer_name } : {}) };
}

/**
 * A draft personal request made by a key, in the one `proof_requests` table: nothing is sent and no
 * link secret is issued; a person sends it from the workspace. A named opportunity becomes accepted.
 */
export async function createKeyRequest(
  ds: DataSource, tenant: { organizationId: string; productId: string }, keyId: string, body: KeyRequestBody,
): Promise<ProofRequest> {
  return ds.transaction(async (em) => {
    let opportunity: ProofOpportunity | null = null;
    if (body.opportunityId !== undefined) {
      // The candidate decision rules shared with the workspace's outcome route; only the 404 names the path here.
      opportunity = await lockProposedOpportunity(em, { id: body.opportunityId, organizationId: tenant.organizationId, productId: tenant.productId })
        .catch((err: unknown) => { throw err instanceof ServiceError && err.status === 404 ? missing('opportunityId', 'opportunity') : err; });
    }
    let flowId: string | null;
    if (body.formId !== undefined) {
      const flow = await em.getRepository(CollectionFlow).findOneBy({ id: body.formId, organizationId: tenant.organizationId, productId: tenant.productId });
      if (!flow) throw missing('formId', 'form');
      flowId = flow.id;
    } else {
      flowId = await latestLiveFlow(em, tenant.productId);
      if (!flowId) throw conflict('the product has no live flow; name formId or publish one');
    }

    let recipient: RequestRecipient;
    if (body.recipientId !== undefined) recipient = await recipientOf(em, tenant.productId, body.channel, body.recipientId);
    else if (opportunity && (opportunity.endUserId || opportunity.personRef)) {
      recipient = opportunity.endUserId
        ? await recipientOf(em, tenant.productId, body.channel, opportunity.endUserId)
        : await recipientOf(em, tenant.productId, body.channel, opportunity.personRef!);
    } else if (NAMED_CHANNELS.includes(body.channel)) {
      throw validationFailed([{ path: 'recipientId', message: `a ${body.channel} request needs recipientId (or an opportunity naming the person)` }]);
    } else recipient = {};
    const issue = recipientIssue(body.channel, recipient);
    if (issue) throw validationFailed([{ path: 'recipientId', message: `${issue.message}; none is known for this recipient` }]);
    // The id may name the person as an end user or as a person reference: an opt-out under either refuses.
    const id = recipient.endUserId ?? recipient.personRef;
    if (await recipientSuppressed(em, tenant.productId, { ...recipient, ...(id ? { endUserId: id, personRef: id } : {}) })) {
      throw new ServiceError('CONFLICT', 'this recipient opted out of story requests', { reason: 'opted_out' });
    }

    const failed = body.message ? messagePolicyFailures(body.message) : [];
    if (failed.length) {
      throw new ServiceError('ASK_POLICY_FAILED', 'the message gates reviews or conditions a reward on sentiment', { failed });
    }

    const request = await insertDraftRequest(em, {
      organizationId: tenant.organizationId, createdBy: { type: 'service_key', id: keyId },
    }, { flowId, channel: body.channel, recipient, message: body.message }, opportunity ? { opportunityId: opportunity.id } : {});
    if (opportunity) {
      await recordOpportunityDecision(em, opportunity.id, { state: 'accepted', requestId: request.id, decidedBy: keyId });
    }
    return request;
  });
}
