import { authError } from '../errors.js';
import { isAuthorizedUrl } from './authorized-domains.js';
import type { ProjectConfig, ProjectDirectory } from './project-config.js';
import { isValidTenantId, realmKey } from '../tenants/realm.js';

/** The path of the hosted action page every mailed link opens. */
export const actionPagePath = '/__/auth/action';

/**
 * The parameters a mailed link hands to the app at its continueUrl, in the order Firebase's hosted
 * handler appends them (the SDK's `isSignInWithEmailLink` needs apiKey, oobCode and mode).
 */
const handedBackParams = ['apiKey', 'oobCode', 'mode', 'lang', 'tenantId'] as const;

/**
 * Why a continueUrl is refused, as sendOobCode answers it: not an absolute http(s) URL, or not on
 * the project's authorized domains (nor on the host Hearth serves).
 */
export type ContinueUrlRefusal = 'INVALID_CONTINUE_URI' | 'UNAUTHORIZED_DOMAIN';

/** The one check of a continueUrl, for sending a mail and for following its link back. */
export function checkContinueUrl(raw: string, config: ProjectConfig, servingHost: string): { url: string } | { refused: ContinueUrlRefusal } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refused: 'INVALID_CONTINUE_URI' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { refused: 'INVALID_CONTINUE_URI' };
  if (!isAuthorizedUrl(url.toString(), config.authorizedDomains, servingHost)) return { refused: 'UNAUTHORIZED_DOMAIN' };
  return { url: url.toString() };
}

/**
 * The query as the page's `new URL(location.href).searchParams` reads it: everything after the
 * first `?` (a second `?` is part of a value), so the server checks exactly what the page will use.
 */
export function queryOf(url: string): URLSearchParams {
  const start = url.indexOf('?');
  return new URLSearchParams(start < 0 ? '' : url.slice(start + 1));
}

/** What the action page's server does with a GET of a mailed link. */
export type ActionLinkAnswer =
  /** 303 to the app: the link is handed back at its continueUrl. */
  | { kind: 'handBack'; location: string }
  /** 303 to the same page without its continueUrl, which is not (or no longer) allowed. */
  | { kind: 'dropContinueUrl'; location: string }
  /** Hearth's own page handles the link. */
  | { kind: 'page' };

/**
 * Following mailed links: where a link's continueUrl may send the browser. Links are read from
 * their query the way the SDK's `ActionCodeURL.parseLink` reads them (first value of each name).
 */
export class ActionLinks {
  constructor(
    private readonly projects: ProjectDirectory,
    /** The origin links point at (`--public-url`); never taken from a request's Host header. */
    private readonly publicUrl: () => string,
  ) {}

  /** The project an API key names, or undefined when the key is unknown (and keys are enforced). */
  projectFor(apiKey: string | null): string | undefined {
    return apiKey ? this.projects.projectForApiKey(apiKey) : undefined;
  }

  /** The realm a link's `tenantId` names in the project (the project's own without one), or undefined for a tenant it does not have. */
  realmOf(projectId: string, tenantId: string | null): string | undefined {
    if (!tenantId) return projectId;
    if (!isValidTenantId(tenantId)) return undefined;
    const realm = realmKey(projectId, tenantId);
    return this.projects.tenant(realm) ? realm : undefined;
  }

  /** sendOobCode's check: the normalized continueUrl, undefined when none is given, or the refusal thrown. */
  async forMail(realm: string, continueUrl: string | undefined): Promise<string | undefined> {
    if (continueUrl === undefined || continueUrl === '') return undefined;
    const checked = checkContinueUrl(continueUrl, await this.projects.config(realm), this.servingHost());
    if ('refused' in checked) throw authError(checked.refused);
    return checked.url;
  }

  /** The link's continueUrl when it is allowed for the project its apiKey names (and the tenant it names), else undefined. */
  async allowedContinueUrl(query: URLSearchParams): Promise<string | undefined> {
    const continueUrl = query.get('continueUrl');
    const projectId = this.projectFor(query.get('apiKey'));
    const realm = projectId === undefined ? undefined : this.realmOf(projectId, query.get('tenantId'));
    if (!continueUrl || realm === undefined) return undefined;
    const checked = checkContinueUrl(continueUrl, await this.projects.config(realm), this.servingHost());
    return 'url' in checked ? checked.url : undefined;
  }

  /**
   * GET /__/auth/action. A sign-in link whose continueUrl is an app elsewhere goes straight back to
   * that app, as Firebase's hosted handler does; the app finishes the sign-in with the address it
   * kept. Every other link is Hearth's page, which only ever sees an allowed continueUrl (its
   * "Continue" link follows it).
   */
  async answer(query: URLSearchParams): Promise<ActionLinkAnswer> {
    if (!query.has('continueUrl')) return { kind: 'page' };
    const continueUrl = await this.allowedContinueUrl(query);
    if (continueUrl === undefined) {
      const kept = new URLSearchParams(query);
      kept.delete('continueUrl');
      const rest = kept.toString();
      return { kind: 'dropContinueUrl', location: rest ? `${actionPagePath}?${rest}` : actionPagePath };
    }
    const isSignIn = query.get('mode') === 'signIn' && query.has('oobCode') && !isWrapped(query);
    if (!isSignIn || new URL(continueUrl).origin === new URL(this.publicUrl()).origin) return { kind: 'page' };
    return { kind: 'handBack', location: handBackLocation(continueUrl, query) };
  }

  /** The origin links point at. */
  origin(): string {
    return new URL(this.publicUrl()).origin;
  }

  private servingHost(): string {
    return new URL(this.publicUrl()).hostname;
  }
}

/** The continueUrl (already checked) with the link's parameters set on it. */
export function handBackLocation(continueUrl: string, query: URLSearchParams): string {
  const target = new URL(continueUrl);
  for (const name of handedBackParams) {
    const value = query.get(name);
    if (value !== null) target.searchParams.set(name, value);
  }
  return target.toString();
}

/**
 * Links wrapped in a deep link (`link=` / `deep_link_id=`): the SDK's parser would read the inner
 * link's parameters, which were never checked. Hearth never mails them; its page refuses them.
 */
export function isWrapped(query: URLSearchParams): boolean {
  return query.has('link') || query.has('deep_link_id');
}
