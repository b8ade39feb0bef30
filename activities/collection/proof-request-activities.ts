import { DataSource } from 'typeorm';
import { claimDelivery, completeDelivery, expireRequest, linkUrlOf, requestStatus } from '../../db/collection/requests';
import { controlLinkExpiry, endUserOfPerson, issuePersonLink, issueStoryLink, storyWithAddress } from '../../db/collection/control-links';
import { insertInboxItem } from '../../db/customer-loop/inbox';
import { ProofItem } from '../../db/entities';
import { newId } from '../../db/rules/ids';
import { Config } from '../../runtime/config';
import { requiredMailTransport } from '../../runtime/mailer';

export interface ProofRequestActivityDeps {
  dataSource: DataSource;
  config: Config;
}

async function productName(ds: DataSource, productId: string): Promise<string> {
  const [row] = await ds.query('SELECT name FROM products WHERE id = $1', [productId]);
  return row?.name ?? 'Our team';
}

/**
 * Personal request steps. A delivery is claimed in the database first, so a retried activity or a
 * second reminder trigger finds it done and sends nothing more.
 */
export function createProofRequestActivities({ dataSource, config }: ProofRequestActivityDeps) {
  return {
    async deliverProofRequest(requestId: string, kind: 'initial' | 'reminder'): Promise<'delivered' | 'skipped'> {
      const plan = await claimDelivery(dataSource, requestId, kind);
      if (!plan) return 'skipped';
      const r = plan.request;
      const product = await productName(dataSource, r.productId);
      const link = linkUrlOf(config.collectPageUrl, plan.linkToken);
      const greeting = r.recipient.name ? `Hi ${r.recipient.name},` : 'Hi,';
      // The subject never carries the link or anything secret: mail subjects end up in logs and previews.
      const subject = kind === 'reminder' ? `Reminder: ${product} would like to hear from you` : `${product} would like to hear from you`;
      if (r.channel === 'email') {
        const mailer = requiredMailTransport(config);
        const body = [greeting, '', r.message ?? `${product} would like to hear about your experience.`, '',
          `Share your story: ${link}`, '', 'If you would rather not be asked again, the page lets you opt out.'].join('\n');
        await mailer.send({ to: r.recipient.email!, subject, text: body });
      } else if (r.channel === 'in_app') {
        // In-app, the signed end user opens the flow with their own identity: no secret in the inbox.
        await insertInboxItem(dataSource.manager, {
          id: newId('inb'), organizationId: r.organizationId, productId: r.productId, endUserId: r.recipient.endUserId!,
          subject, preview: r.message ?? `${product} would like to hear about your experience.`,
        });
      }
      await completeDelivery(dataSource, requestId, kind);
      return 'delivered';
    },
    /**
     * Mints the person link for the message itself, so no secret travels through Temporal. An address
     * only a key gave (no story the person told through a customer route has it) is the key's word,
     * not the person's: it gets a story link for this item, never a person link.
     */
    async deliverApprovalLink(
      proofItemId: string, channel: 'email' | 'in_app', reason: 'approval' | 'person_link' = 'approval', expiresAt?: string,
    ): Promise<string> {
      const item = await dataSource.getRepository(ProofItem).findOneByOrFail({ id: proofItemId });
      if (item.status === 'revoked' || !item.customerPersonId) return 'skipped';
      const person = { organizationId: item.organizationId, productId: item.productId, personRef: item.customerPersonId };
      const until = expiresAt ? new Date(expiresAt) : controlLinkExpiry(config.controlLinkTtlDays);
      const product = await productName(dataSource, item.productId);
      const subject = reason === 'person_link' ? `Your stories with ${product}` : `${product} asks you to review your story`;
      const text = reason === 'person_link'
        ? `You asked for the link to your stories with ${product}.`
        : `${product} has a version of your story for you to review.`;
      if (channel === 'email') {
        const mailer = requiredMailTransport(config);
        if (!item.customerEmail) return 'skipped';
        const own = await storyWithAddress(dataSource, person, item.customerEmail);
        const link = await dataSource.transaction((em) => (own
          ? issuePersonLink(em, person, config.collectPageUrl, until)
          : issueStoryLink(em, person, item.id, config.collectPageUrl, until)));
        await mailer.send({
          to: item.customerEmail, subject,
          text: [text, '', `See, approve, pause or withdraw your ${own ? 'stories' : 'story'}: ${link.controlUrl}`, '',
            'Keep this link to yourself: anyone holding it can act for you.'].join('\n'),
        });
      } else {
        const endUserId = await endUserOfPerson(dataSource, person);
        if (!endUserId) return 'skipped';
        // The inbox names the person link; the signed end user redeems it (POST /api/v1/inbox/{id}/control-link).
        await insertInboxItem(dataSource.manager, {
          id: newId('inb'), organizationId: item.organizationId, productId: item.productId, endUserId,
          subject, preview: text, control: { personRef: item.customerPersonId, expiresAt: until },
        });
      }
      return 'delivered';
    },
    async expireProofRequest(requestId: string): Promise<void> {
      await expireRequest(dataSource, requestId);
    },
    async proofRequestStatus(requestId: string): Promise<string | null> {
      return (await requestStatus(dataSource, requestId))?.status ?? null;
    },
  };
}
