/**
 * The one stand-in for the outside world in the production-credential tests: firebase-admin (and
 * google-auth-library under it) call Google's hosts over https, with no URL option for Auth; these
 * requests are sent to Hearth instead, which serves each host under `/<host>/...`. Everything else
 * (including the test's own calls) goes where it was going.
 */
import http from 'node:http';
import https from 'node:https';

const googleHosts = new Set(['oauth2.googleapis.com', 'identitytoolkit.googleapis.com', 'www.googleapis.com', 'securetoken.googleapis.com', 'storage.googleapis.com', 'firebasestorage.googleapis.com']);

type RequestFn = (...args: unknown[]) => http.ClientRequest;

export interface GoogleHostsRedirect {
  /** Paths (without query) of the requests sent to Hearth, in order. */
  readonly seen: string[];
  restore(): void;
}

/** Points https requests for Google's hosts at the Hearth listening on `hearthUrl` (plain http). */
export function redirectGoogleHosts(hearthUrl: string): GoogleHostsRedirect {
  const target = new URL(hearthUrl);
  const original = https.request as unknown as RequestFn;
  const seen: string[] = [];
  const redirected = (...args: unknown[]): http.ClientRequest => {
    // https.request(options[, cb]) (firebase-admin) or https.request(url, options[, cb]) (node-fetch).
    let options: http.RequestOptions;
    let rest: unknown[];
    if (typeof args[0] === 'string' || args[0] instanceof URL) {
      const url = new URL(String(args[0]));
      const extra = typeof args[1] === 'object' && args[1] !== null ? (args[1] as http.RequestOptions) : {};
      options = { ...extra, hostname: url.hostname, path: `${url.pathname}${url.search}` };
      rest = args.slice(typeof args[1] === 'object' ? 2 : 1);
    } else {
      options = args[0] as http.RequestOptions;
      rest = args.slice(1);
    }
    const host = options.hostname ?? options.host?.split(':')[0];
    if (!host || !googleHosts.has(host)) return original(...args);
    const path = `/${host}${String(options.path ?? '/')}`;
    seen.push(path.split('?')[0]!);
    const { agent: _agent, host: _host, port: _port, protocol: _protocol, ...kept } = options;
    return (http.request as unknown as RequestFn)({ ...kept, protocol: 'http:', hostname: target.hostname, port: Number(target.port), path }, ...rest);
  };
  (https as { request: unknown }).request = redirected;
  return {
    seen,
    restore: () => {
      (https as { request: unknown }).request = original;
    },
  };
}
