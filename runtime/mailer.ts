import { ApplicationFailure } from '@temporalio/common';
import nodemailer, { Transporter } from 'nodemailer';
import { ServiceError } from './service-error';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Where the service's e-mail goes: any SMTP server named by `SMTP_URL` (nodemailer). */
export interface MailTransport {
  send(message: MailMessage): Promise<void>;
}

const transports = new Map<string, Transporter>();

/** The configured transport, or null when `SMTP_URL` is not set (e-mail then answers 503). */
export function mailTransport(config: { smtpUrl: string | undefined; mailFrom: string }): MailTransport | null {
  const url = config.smtpUrl;
  if (!url) return null;
  let transporter = transports.get(url);
  if (!transporter) {
    transporter = nodemailer.createTransport(url);
    transports.set(url, transporter);
  }
  const t = transporter;
  return {
    async send(message) {
      await t.sendMail({ from: config.mailFrom, to: message.to, subject: message.subject, text: message.text });
    },
  };
}

export const mailerUnavailable = () =>
  new ServiceError('SERVICE_UNAVAILABLE', 'e-mail is not configured on this service (SMTP_URL)');

/** The transport of an activity that must send: without SMTP_URL it fails retryably, so the mail goes once it is set. */
export function requiredMailTransport(config: { smtpUrl: string | undefined; mailFrom: string }): MailTransport {
  const mailer = mailTransport(config);
  if (!mailer) throw ApplicationFailure.retryable('SMTP_URL is not configured', 'MAILER_UNAVAILABLE');
  return mailer;
}
