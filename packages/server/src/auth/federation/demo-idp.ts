import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import Provider, { type Configuration } from 'oidc-provider';

/**
 * A real OpenID provider (oidc-provider, a certified implementation) on its own port, for the demo
 * ("Sign in with Hearth Demo" works offline on first start) and for tests. Its sign-in page is
 * Hearth's own, plain and offline: a name and an email, nothing checked.
 */
export interface DemoIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

export interface DemoIdpOptions {
  host: string;
  port: number;
  /** Where the provider may send users back: Hearth's handler. */
  redirectUris: string[];
}

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** Demo accounts are their email: sub is derived from it, so the same address is the same person. */
function accountFor(accountId: string) {
  const email = Buffer.from(accountId, 'base64url').toString();
  const name = email.split('@')[0] ?? email;
  return {
    accountId,
    async claims() {
      return { sub: accountId, email, email_verified: true, name, given_name: name };
    },
  };
}

function loginPage(uid: string, clientId: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Hearth Demo sign-in</title></head>
<body style="font-family: sans-serif; max-width: 24rem; margin: 3rem auto">
<h1>Hearth Demo</h1><p>${escapeHtml(clientId)} wants you to sign in. This demo provider trusts whatever you type.</p>
<form method="post" action="/interaction/${escapeHtml(uid)}/login">
<p><label>Email <input name="email" type="email" required autofocus></label></p>
<p><button type="submit">Continue</button> <button type="submit" name="cancel" value="1" formnovalidate>Cancel</button></p>
</form></body></html>`;
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  let body = '';
  for await (const chunk of request) {
    body += (chunk as Buffer).toString();
    if (body.length > 10_000) throw new Error('form too large');
  }
  return new URLSearchParams(body);
}

export async function startDemoIdp(options: DemoIdpOptions): Promise<DemoIdp> {
  const issuer = `http://${options.host}:${options.port}`;
  const clientId = 'hearth-demo';
  const clientSecret = randomBytes(24).toString('base64url');
  const configuration: Configuration = {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: options.redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name'] },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    findAccount: (_ctx, id) => accountFor(id),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // First-party demo: grant what was asked without a consent screen.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope('openid email profile');
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  const callback = provider.callback();

  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const match = /^\/interaction\/([A-Za-z0-9_-]+)(\/login)?$/.exec((request.url ?? '').split('?')[0] ?? '');
    if (!match) return void callback(request, response);
    void (async () => {
      const details = await provider.interactionDetails(request, response);
      if (request.method === 'GET' && !match[2]) {
        // form-action also governs the redirects after the post, which end at Hearth's handler.
        const returnTo = options.redirectUris.map((uri) => new URL(uri).origin).join(' ');
        response.writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${returnTo}`,
        });
        return response.end(loginPage(details.uid, String(details.params.client_id)));
      }
      const form = await readForm(request);
      if (form.get('cancel')) {
        return provider.interactionFinished(request, response, { error: 'access_denied', error_description: 'The user cancelled.' }, { mergeWithLastSubmission: false });
      }
      const email = (form.get('email') ?? '').trim().toLowerCase();
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) {
        response.writeHead(400, { 'content-type': 'text/plain' });
        return response.end('An email is needed.');
      }
      return provider.interactionFinished(request, response, { login: { accountId: Buffer.from(email).toString('base64url') } }, { mergeWithLastSubmission: false });
    })().catch((error: unknown) => {
      response.writeHead(400, { 'content-type': 'text/plain' });
      response.end(`Sign-in failed: ${(error as Error).message}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    issuer,
    clientId,
    clientSecret,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
