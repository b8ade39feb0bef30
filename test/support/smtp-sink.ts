import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface SunkMail {
  to: string[];
  subject: string;
  raw: string;
}

/** A local SMTP server that keeps every message it accepts; tests read them and may make it refuse some. */
export class SmtpSink {
  readonly messages: SunkMail[] = [];
  private refuse = 0;
  private server: SMTPServer | null = null;

  /** The next `n` messages are refused with a temporary failure, as a mail server that hiccups. */
  refuseNext(n: number): void {
    this.refuse = n;
  }

  async start(): Promise<string> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (this.refuse > 0) {
            this.refuse -= 1;
            const err = Object.assign(new Error('try again later'), { responseCode: 451 });
            callback(err);
            return;
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          const subject = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(raw)?.[1].replace(/\r\n[ \t]/g, ' ') ?? '';
          this.messages.push({ to: session.envelope.rcptTo.map((r) => r.address), subject, raw });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.server.address() as AddressInfo;
    return `smtp://127.0.0.1:${port}`;
  }

  to(address: string): SunkMail[] {
    return this.messages.filter((m) => m.to.includes(address));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The body of a message with quoted-printable soft breaks undone, for reading links. */
export function bodyOf(raw: string): string {
  const body = raw.split(/\r\n\r\n/).slice(1).join('\r\n\r\n');
  return body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}
