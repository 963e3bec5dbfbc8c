/**
 * Whether a URL may receive users back (continue URLs in mails, redirect URLs of federated sign-in):
 * http(s) on one of the project's authorized domains or a subdomain of one (an IP address only
 * itself), or on the host Hearth itself serves, which is always authorized as a Firebase project's
 * own hosting domains are.
 */
export function isAuthorizedUrl(url: string, authorizedDomains: string[], servingHost: string | undefined): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  const host = parsed.hostname.toLowerCase();
  const domains = servingHost ? [...authorizedDomains, servingHost] : authorizedDomains;
  return domains.some((domain) => {
    const d = domain.toLowerCase();
    return host === d || (!/^[0-9.]+$/.test(d) && !d.startsWith('[') && host.endsWith(`.${d}`));
  });
}
