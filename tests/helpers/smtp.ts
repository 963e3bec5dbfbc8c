import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './hearth.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
}

/** A real SMTP server (smtp-server) on 127.0.0.1 that keeps what it receives, parsed (mailparser). */
export class MailCatcher {
  readonly received: ReceivedMail[] = [];
  private server?: SMTPServer;
  port = 0;

  async start(): Promise<void> {
    this.port = await freePort();
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        simpleParser(stream).then(
          (parsed) => {
            this.received.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
            });
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  async waitFor(to: string, subject: RegExp, timeoutMs = 10_000): Promise<ReceivedMail> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const mail = this.received.find((m) => m.to.includes(to.toLowerCase()) && subject.test(m.subject));
      if (mail) return mail;
      if (Date.now() > deadline) throw new Error(`no mail to ${to} matching ${subject} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** The action link in a received mail's text part. */
export function actionLinkIn(mail: ReceivedMail): string {
  const match = /https?:\/\/\S+\/__\/auth\/action\?\S+/.exec(mail.text);
  if (!match) throw new Error(`no action link in:\n${mail.text}`);
  return match[0];
}
