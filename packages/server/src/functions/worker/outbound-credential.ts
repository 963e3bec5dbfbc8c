/**
 * Runs in the worker. firebase-admin, pointed at Hearth by the *_EMULATOR_HOST variables, presents
 * the emulator credential `Bearer owner` (Auth and Storage over HTTP/1.1 or fetch, Firestore over
 * gRPC's HTTP/2), which production Hearth refuses. Unchanged app code cannot be told to present
 * another, so the worker swaps it, on requests to Hearth's own address only, for the secret Hearth
 * handed over IPC (auth/api/functions-credential.ts): the secret is never in the environment, and
 * never sent anywhere else.
 */
import http from 'node:http';
import http2 from 'node:http2';

const emulatorCredential = /^Bearer owner$/i;

type RequestFn = typeof http.request;

export function presentCredential(credential: string, hearthHost: string): void {
  const ours = `Bearer ${credential}`;
  const toHearth = (host: unknown) => typeof host === 'string' && host.toLowerCase() === hearthHost.toLowerCase();

  const request = http.request;
  // Headers are sent at the first write or end, after `request` returns: swapping them here is in time.
  const patched = function (this: unknown, ...args: Parameters<RequestFn>) {
    const req = (request as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    const header = req.getHeader('authorization');
    if (typeof header === 'string' && emulatorCredential.test(header) && toHearth(req.getHeader('host'))) req.setHeader('authorization', ours);
    return req;
  } as RequestFn;
  http.request = patched;
  // Node's own `get` calls the module's inner `request`, not the export.
  http.get = function (this: unknown, ...args: Parameters<RequestFn>) {
    const req = (patched as (...a: unknown[]) => http.ClientRequest).apply(this, args);
    req.end();
    return req;
  } as typeof http.get;

  const connect = http2.connect;
  http2.connect = function (this: unknown, authority: string | URL, ...rest: unknown[]) {
    const session = (connect as (...a: unknown[]) => http2.ClientHttp2Session).call(this, authority, ...rest);
    let host: string | undefined;
    try {
      host = new URL(String(authority)).host;
    } catch {
      host = undefined;
    }
    if (!toHearth(host)) return session;
    const open = session.request.bind(session);
    session.request = ((headers?: http2.OutgoingHttpHeaders, options?: http2.ClientSessionRequestOptions) => {
      const value = headers?.authorization;
      return open(typeof value === 'string' && emulatorCredential.test(value) ? { ...headers, authorization: ours } : headers, options);
    }) as typeof session.request;
    return session;
  } as typeof http2.connect;

  const fetchOriginal = globalThis.fetch;
  if (typeof fetchOriginal === 'function') {
    globalThis.fetch = (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const req = new Request(input, init);
      const value = req.headers.get('authorization');
      if (value === null || !emulatorCredential.test(value) || !toHearth(new URL(req.url).host)) return fetchOriginal(input, init);
      const headers = new Headers(req.headers);
      headers.set('authorization', ours);
      return fetchOriginal(new Request(req, { headers }));
    };
  }
}
