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
  /**
   * --dev: the emulator's own endpoints (`/emulator/...`) also answer pages served from this
   * machine (see isFromLocalPage), with CORS, as the SDKs' browser test suites call them.
   */
  emulatorOpenToLocalPages?: boolean;
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

/** Loopback host names as a page's Origin spells them. */
const loopbackOriginHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Sent by a page served from this machine (an Origin on a loopback name, any port): a developer's
 * dev server or a test runner's page (karma, Playwright). A name that merely resolves to 127.0.0.1
 * (DNS rebinding) is not one: the Origin carries the name the page was loaded from.
 */
export function isFromLocalPage(request: Pick<FastifyRequest, 'headers'>): boolean {
  const origin = request.headers.origin;
  if (!origin) return false;
  try {
    return loopbackOriginHosts.has(new URL(origin).hostname.toLowerCase());
  } catch {
    return false;
  }
}

/**
 * May this request use the emulator's open endpoints (clearing accounts or documents, the Auth
 * emulator's config)? Only in --dev, and from local tools or pages served from this machine, as
 * Google's emulators serve their test suites; never from a page of another site.
 */
export function mayUseOpenEmulatorEndpoint(request: Pick<FastifyRequest, 'headers' | 'fromForeignPage'>, dev: boolean): boolean {
  return dev && (!request.fromForeignPage || isFromLocalPage(request));
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
