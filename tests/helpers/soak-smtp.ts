import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { freePort } from './hearth.js';

export interface AcceptedMail {
  to: string[];
  subject: string;
  text: string;
}

/**
 * A real SMTP server (smtp-server) whose answer to each message can be chosen: accept it, refuse it
 * for now (4xx: the sender should retry) or for good (5xx). It keeps what it accepted, parsed.
 */
export class ChoosySmtp {
  readonly accepted: AcceptedMail[] = [];
  /** Messages refused so far. */
  refusals = 0;
  /** Connections that broke (a sender killed mid-session). */
  connectionErrors = 0;
  /** Decides each message by recipient; the default accepts everything. */
  answer: (to: string) => 'accept' | 'later' | 'never' = () => 'accept';
  port = 0;
  private server?: SMTPServer;

  async start(port?: number): Promise<void> {
    this.port = port ?? (await freePort());
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        const verdict = this.answer(address.address);
        if (verdict === 'accept') return callback();
        this.refusals++;
        const error = new Error(verdict === 'later' ? 'Try again later' : 'Mailbox unavailable') as Error & { responseCode: number };
        error.responseCode = verdict === 'later' ? 451 : 550;
        callback(error);
      },
      onData: (stream, session, callback) => {
        simpleParser(stream).then(
          (parsed) => {
            this.accepted.push({ to: session.envelope.rcptTo.map((r) => r.address), subject: parsed.subject ?? '', text: parsed.text ?? '' });
            callback();
          },
          (error: Error) => callback(error),
        );
      },
    });
    // A sender killed mid-session (the soak's kill -9) resets its connection: that is the sender's
    // failure, seen here as a socket error, and must not bring the server down.
    this.server.on('error', () => {
      this.connectionErrors++;
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  get url(): string {
    return `smtp://127.0.0.1:${this.port}`;
  }

  to(address: string): AcceptedMail[] {
    return this.accepted.filter((m) => m.to.includes(address.toLowerCase()));
  }

  /** Polls until `done` holds (bounded: a mail that never comes fails the caller, not a hang). */
  async until(done: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms (accepted ${this.accepted.length}, refused ${this.refusals})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
