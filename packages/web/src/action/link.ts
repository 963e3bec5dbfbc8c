import { ActionCodeURL, type Auth } from 'firebase/auth';

/** Where Hearth's server answers mailed links (see packages/server/src/web/web-routes.ts). */
const actionPagePath = '/__/auth/action';

/** A mailed link as the action page uses it: ActionCodeURL's fields, with a continueUrl the server let through. */
export type ActionLink = Readonly<Pick<ActionCodeURL, 'apiKey' | 'code' | 'continueUrl' | 'languageCode' | 'operation' | 'tenantId'>>;

/**
 * Parses the page's address as the SDK parses mailed links, except that links wrapped in a deep
 * link (`link=`, `deep_link_id=`) are broken: the SDK would read the inner link, whose continueUrl
 * the server never checked. The continueUrl is kept only when the page was reached at the exact
 * path the server answers (which drops a continueUrl that is not on an authorized domain): the
 * router also matches other spellings of it (another case, encoded letters) that the server
 * serves as plain pages, unchecked.
 */
export function parseActionLink(href: string): ActionLink | null {
  const url = new URL(href);
  if (url.searchParams.has('link') || url.searchParams.has('deep_link_id')) return null;
  const parsed = ActionCodeURL.parseLink(href);
  if (!parsed) return null;
  const checkedByServer = url.pathname === actionPagePath || url.pathname === `${actionPagePath}/`;
  return {
    apiKey: parsed.apiKey,
    code: parsed.code,
    continueUrl: checkedByServer ? parsed.continueUrl : null,
    languageCode: parsed.languageCode,
    operation: parsed.operation,
    tenantId: parsed.tenantId,
  };
}

/** The localStorage key where the "send me a link" page keeps the address it sent a link to. */
export const emailForSignInKey = 'hearthEmailForSignIn';

export function readEmailForSignIn(): string | null {
  try {
    return window.localStorage.getItem(emailForSignInKey);
  } catch {
    return null; // storage blocked: the action page asks for the address instead
  }
}

export function writeEmailForSignIn(email: string | null): void {
  try {
    if (email === null) window.localStorage.removeItem(emailForSignInKey);
    else window.localStorage.setItem(emailForSignInKey, email);
  } catch {
    // storage blocked: the action page will ask for the address
  }
}

/**
 * Runs one call on the shared Auth instance with the link's tenant and language (so a mail the
 * page sends, such as a password reset after a recovery, is in the link's language), then puts
 * the instance's own settings back.
 */
export async function withLinkSettings<T>(auth: Auth, link: ActionLink, call: () => Promise<T>): Promise<T> {
  const { tenantId, languageCode } = auth;
  if (link.tenantId) auth.tenantId = link.tenantId;
  if (link.languageCode) auth.languageCode = link.languageCode;
  try {
    return await call();
  } finally {
    auth.tenantId = tenantId;
    auth.languageCode = languageCode;
  }
}

/** The continueUrl if it is an absolute http(s) address (never javascript: or data:), else null. */
export function webContinueUrl(continueUrl: string | null): string | null {
  if (!continueUrl) return null;
  try {
    const url = new URL(continueUrl);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : null;
  } catch {
    return null;
  }
}

/** Path, query and fragment of a continueUrl on this page's own origin (and not the action page), else null. */
export function sameOriginPath(continueUrl: string | null, origin: string): string | null {
  const web = webContinueUrl(continueUrl);
  if (!web) return null;
  const url = new URL(web);
  if (url.origin !== origin || url.pathname.startsWith('/__/')) return null;
  return `${url.pathname}${url.search}${url.hash}`;
}
