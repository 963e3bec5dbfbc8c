import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { freePort } from './hearth.js';

export interface GithubUser {
  id: number;
  login: string;
  name: string;
  email: string;
}

/**
 * A stand-in for github.com's OAuth endpoints (the one thing outside the machine): authorize
 * (answers at once for `user`), token exchange with client secret and PKCE, and the user API.
 */
export class FakeGithub {
  private server?: Server;
  private readonly codes = new Map<string, { challenge: string; redirectUri: string }>();
  /** Token -> the client it was issued to. */
  private readonly tokens = new Map<string, string>();
  port = 0;
  readonly clientId = 'github-client';
  readonly clientSecret = randomBytes(12).toString('hex');

  constructor(private readonly user: GithubUser) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.port = await freePort();
    this.server = createServer((request, response) => {
      void this.handle(request).then(({ status, headers, body }) => {
        response.writeHead(status, headers);
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  /** An access token issued outside the handler flow: to this app's client, or to another app. */
  issueToken(clientId = this.clientId): string {
    const token = randomBytes(16).toString('hex');
    this.tokens.set(token, clientId);
    return token;
  }

  private async handle(request: IncomingMessage): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    const url = new URL(request.url ?? '/', this.base);
    const json = (status: number, value: unknown) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
    if (url.pathname === '/login/oauth/authorize') {
      if (url.searchParams.get('client_id') !== this.clientId || url.searchParams.get('code_challenge_method') !== 'S256') return json(400, { error: 'bad_request' });
      const code = randomBytes(12).toString('hex');
      const redirectUri = url.searchParams.get('redirect_uri')!;
      this.codes.set(code, { challenge: url.searchParams.get('code_challenge')!, redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return { status: 302, headers: { location: back.toString() }, body: '' };
    }
    if (url.pathname === '/login/oauth/access_token' && request.method === 'POST') {
      let text = '';
      for await (const chunk of request) text += (chunk as Buffer).toString();
      const form = new URLSearchParams(text);
      const grant = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const verifierOk = grant && createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') === grant.challenge;
      if (!grant || !verifierOk || form.get('client_secret') !== this.clientSecret || form.get('redirect_uri') !== grant.redirectUri) return json(400, { error: 'bad_verification_code' });
      return json(200, { access_token: this.issueToken(), token_type: 'bearer', scope: 'read:user' });
    }
    const check = /^\/applications\/([^/]+)\/token$/.exec(url.pathname);
    if (check && request.method === 'POST') {
      let text = '';
      for await (const chunk of request) text += (chunk as Buffer).toString();
      const expected = `Basic ${Buffer.from(`${this.clientId}:${this.clientSecret}`).toString('base64')}`;
      if (request.headers.authorization !== expected || decodeURIComponent(check[1]!) !== this.clientId) return json(401, { message: 'Bad credentials' });
      const token = (JSON.parse(text) as { access_token?: string }).access_token ?? '';
      return this.tokens.get(token) === this.clientId ? json(200, { token }) : json(404, { message: 'Not Found' });
    }
    if (url.pathname === '/user') {
      const token = (request.headers.authorization ?? '').replace(/^Bearer /i, '');
      if (!this.tokens.has(token)) return json(401, { message: 'Bad credentials' });
      return json(200, { ...this.user, avatar_url: `https://avatars.example/${this.user.id}` });
    }
    return json(404, { message: 'Not Found' });
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
