import type { FastifyRequest } from 'fastify';

/**
 * Which requests come from a web page on another site. Such a page can make the user's browser
 * send anything it likes to Hearth (a form post needs no preflight, and CORS lets the SDKs call
 * from other origins), so the admin credential is never accepted from it: in --dev that
 * credential is the well-known `Bearer owner`. Non-browser callers (firebase-admin, curl) send
 * neither `Origin` nor `Sec-Fetch-Site`.
 */
export interface OriginPolicy {
  /** Does this `Authorization` value (or one carried in a WebChannel handshake) name the administrator? */
  isAdminCredential(authorization: string | undefined): boolean;
  /** Hearth's own origins (scheme://host:port), whose pages may use the admin credential. */
  ownOrigins(): readonly string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Sent by a browser on behalf of a page that is not on Hearth's own origin. */
    fromForeignPage: boolean;
  }
}

export function isFromForeignPage(request: Pick<FastifyRequest, 'headers'>, ownOrigins: readonly string[]): boolean {
  const fetchSite = request.headers['sec-fetch-site'];
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') return true;
  const origin = request.headers.origin;
  // Browsers send `Origin: null` from sandboxed frames, data: URLs and file: pages: all foreign.
  return origin !== undefined && !ownOrigins.includes(origin.toLowerCase());
}

/**
 * The origins a page served by Hearth can have: the public URL, the listening address and, when
 * it listens on a loopback or wildcard address, the loopback names for its port. Names that merely
 * resolve to Hearth (DNS rebinding) are not among them.
 */
export function ownOriginsOf(listeningUrl: string, publicUrl: string | undefined): string[] {
  const origins = new Set<string>();
  for (const url of [listeningUrl, publicUrl]) {
    if (url) origins.add(new URL(url).origin.toLowerCase());
  }
  if (listeningUrl) {
    const listening = new URL(listeningUrl);
    const host = listening.hostname.replace(/^\[|\]$/g, '');
    if (['127.0.0.1', '::1', 'localhost', '0.0.0.0', '::'].includes(host)) {
      for (const name of ['127.0.0.1', 'localhost', '[::1]']) origins.add(`http://${name}:${listening.port}`);
    }
  }
  return [...origins];
}
