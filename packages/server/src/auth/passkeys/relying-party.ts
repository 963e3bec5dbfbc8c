import { isAuthorizedUrl } from '../core/authorized-domains.js';

const loopback = new Set(['127.0.0.1', '[::1]', '::1']);

/**
 * The WebAuthn relying party id: the host of `--public-url` (or of the listening address). Browsers
 * refuse IP addresses as relying party ids, so a loopback address stands for `localhost`.
 */
export function relyingPartyId(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.toLowerCase();
  return loopback.has(host) ? 'localhost' : host;
}

/**
 * Whether a page at `origin` may use the project's passkeys: it is the public URL's origin, or an
 * http(s) origin on one of the project's authorized domains whose host is the relying party id or
 * a subdomain of it (a browser signs for no other). Plain http only for localhost, as browsers allow.
 */
export function allowedOrigin(origin: string, publicUrl: string, authorizedDomains: string[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.origin !== origin) return false;
  const rpId = relyingPartyId(publicUrl);
  const host = parsed.hostname.toLowerCase();
  if (host !== rpId && !host.endsWith(`.${rpId}`)) return false;
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && (host === 'localhost' || host.endsWith('.localhost')))) return false;
  if (origin === new URL(publicUrl).origin) return true;
  return isAuthorizedUrl(origin, authorizedDomains, relyingPartyId(publicUrl));
}
