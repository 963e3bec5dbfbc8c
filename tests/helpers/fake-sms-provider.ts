import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSms {
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  form: Record<string, string>;
}

/** What the stand-in answers one request with. */
export interface ProviderAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * A stand-in for Twilio's Messages API (the phone network is truly outside the machine): records
 * every request (path, Authorization, form fields) and answers from a script, then 201 as Twilio does.
 */
export class FakeSmsProvider {
  readonly received: ReceivedSms[] = [];
  /** Answers for the next requests, in order; once used up, every request is accepted. */
  script: ProviderAnswer[] = [];
  private server?: Server;

  get base(): string {
    const address = this.server?.address() as AddressInfo | undefined;
    return `http://127.0.0.1:${address?.port ?? 0}`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        this.received.push({
          path: request.url ?? '',
          authorization: request.headers.authorization,
          contentType: request.headers['content-type'],
          form: Object.fromEntries(new URLSearchParams(text)),
        });
        const answer = this.script.shift() ?? { status: 201, body: { sid: `SM${this.received.length}`, status: 'queued' } };
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

/** Twilio's error body for a number it cannot text. */
export const invalidToNumber: ProviderAnswer = { status: 400, body: { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 } };
export const unavailable: ProviderAnswer = { status: 503, body: { code: 20500, message: 'Service unavailable', status: 503 } };
