import { DataSource } from 'typeorm';
import { ApplicationFailure } from '@temporalio/activity';
import { claimDelivery, completeDelivery, expireRequest, linkUrlOf, requestStatus } from '../../db/collection/requests';
import { issueApprovalLink } from '../../db/collection/approval-links';
import { insertInboxItem } from '../../db/customer-loop/inbox';
import { ProofItem } from '../../db/entities';
import { newId } from '../../db/rules/ids';
import { Config } from '../../runtime/config';
import { mailTransport } from '../../runtime/mailer';

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
        const mailer = mailTransport(config);
        if (!mailer) throw ApplicationFailure.retryable('SMTP_URL is not configured', 'MAILER_UNAVAILABLE');
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
    /** Mints a control link of its own for the message, so the secret never travels through Temporal. */
    async deliverApprovalLink(proofItemId: string, channel: 'email' | 'in_app'): Promise<string> {
      const item = await dataSource.getRepository(ProofItem).findOneByOrFail({ id: proofItemId });
      if (item.status === 'revoked' || !item.customerPersonId) return 'skipped';
      const product = await productName(dataSource, item.productId);
      const subject = `${product} asks you to review your story`;
      if (channel === 'email') {
        const mailer = mailTransport(config);
        if (!mailer) throw ApplicationFailure.retryable('SMTP_URL is not configured', 'MAILER_UNAVAILABLE');
        if (!item.customerEmail) return 'skipped';
        const link = await issueApprovalLink(dataSource, item, { pageUrl: config.collectPageUrl, controlTtlDays: config.controlLinkTtlDays });
        await mailer.send({
          to: item.customerEmail, subject,
          text: [`${product} has a version of your story for you to review.`, '', `Review, approve or withdraw it: ${link.controlUrl}`].join('\n'),
        });
      } else {
        await insertInboxItem(dataSource.manager, {
          id: newId('inb'), organizationId: item.organizationId, productId: item.productId, endUserId: item.customerPersonId,
          subject, preview: `${product} has a version of your story for you to review.`,
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
