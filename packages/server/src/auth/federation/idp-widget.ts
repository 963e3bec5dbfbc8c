import type { Store } from '../../storage/store.js';
import { inertJson } from './pages.js';

/**
 * --dev: the Auth emulator's sign-in widget ("Auth Emulator IDP Login Widget"), shown by the
 * hosted handler for popup and redirect sign-in with a provider Hearth has no settings for
 * (`GoogleAuthProvider`, `GithubAuthProvider`, ...): the developer picks an account made up
 * earlier, or makes one up (email, display name, screen name, photo URL), and the page hands the
 * SDK the emulator's answer, `<handler>?providerId=<p>&id_token=<made-up claims>`, which
 * signInWithIdp takes in --dev (fake-credentials.ts). Its elements carry the emulator's ids and
 * classes, which apps' browser tests drive (firebase-js-sdk's own webdriver suite among them).
 * Hearth's page of its own: no outside resources, our scripts only (pages.ts's policy).
 */
export interface WidgetData {
  widget: true;
  apiKey: string;
  appName: string;
  authType: string;
  redirectUrl: string;
  /** The redirect URL was checked against the project's authorized domains before the widget was offered. */
  redirectAllowed: true;
  eventId: string | null;
  tenantId: string | null;
  providerId: string;
  /** Identities of this provider already in the project: pick one to sign in as it again. */
  accounts: MadeUpIdentity[];
}

export interface MadeUpIdentity {
  displayName?: string;
  email?: string;
  /** The made-up credential (JSON claims) that signs in as this identity. */
  idToken: string;
}

/** How many accounts the widget lists, and reads at most to find them (a dev project is small). */
const maxListed = 100;
const maxScanned = 10_000;
const pageSize = 1000;

/** The identities of `providerId` in `realm`, as the widget offers them (claims as the emulator makes them). */
export async function madeUpIdentities(store: Store, realm: string, providerId: string): Promise<MadeUpIdentity[]> {
  const found: MadeUpIdentity[] = [];
  let after: string | undefined;
  for (let scanned = 0; scanned < maxScanned && found.length < maxListed; scanned += pageSize) {
    const page = await store.listUsers(realm, pageSize, after);
    for (const user of page.users) {
      for (const info of user.providerUserInfo) {
        if (info.providerId !== providerId || found.length >= maxListed) continue;
        const claims = { sub: info.rawId, iss: '', aud: '', exp: 0, iat: 0, name: info.displayName, email: info.email, email_verified: true, picture: info.photoUrl };
        found.push({ ...(info.displayName ? { displayName: info.displayName } : {}), ...(info.email ? { email: info.email } : {}), idToken: JSON.stringify(claims) });
      }
    }
    if (!page.nextPageToken) break;
    after = page.nextPageToken;
  }
  return found;
}

const styles = `
body { font-family: system-ui, sans-serif; margin: 0; background: #f5f5f5; color: #212121 }
#content { max-width: 34rem; margin: 2rem auto; background: #fff; border-radius: 8px; box-shadow: 0 1px 4px rgba(0,0,0,.2); padding: 1.5rem }
#title { font-size: 1.3rem; margin: 0 0 1rem }
#accounts-list ul { list-style: none; padding: 0; margin: 0 }
#accounts-list li { padding: .7rem .5rem; border-bottom: 1px solid #eee; cursor: pointer }
#accounts-list li:hover, #accounts-list li:focus { background: #f0f4ff }
.primary-text { display: block; font-weight: 500 } .secondary-text { display: block; color: #666; font-size: .9rem }
.callout { background: #e8f0fe; padding: .6rem .8rem; border-radius: 4px; margin: 0 0 1rem }
.js-signin-warning { background: #fdecea }
.form-label { display: block; margin: .8rem 0 .2rem; font-size: .9rem }
input { width: 100%; box-sizing: border-box; padding: .5rem; font-size: 1rem }
.error-info { color: #c62828; font-size: .85rem; min-height: 1em; display: block }
#main-action { display: flex; justify-content: space-between; margin-top: 1.2rem }
button { font-size: 1rem; padding: .5rem 1rem; cursor: pointer }
`;

export function renderIdpWidget(data: WidgetData): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Auth Emulator IDP Login Widget</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${styles}</style>
</head><body>
<div id="content">
  <h1 id="title">Sign-in with <span class="js-provider-id provider-name">Provider</span></h1>
  <p id="status" role="status"></p>
  <p class="callout js-signin-warning" style="display:none"><span class="content"></span></p>
  <div id="accounts-list">
    <p class="subtitle js-accounts-help-text">Please select an existing account in the Auth Emulator or add a new one:</p>
    <ul>
      <li id="add-account-button" class="js-new-account" tabindex="0"><button type="button">Add new account</button></li>
    </ul>
  </div>
  <div id="add-user" style="display:none">
    <p class="callout">Hearth (--dev) makes up this account: nothing is sent to <span class="js-provider-id">Provider</span>, and the email counts as verified by it.</p>
    <button id="autogen-button" type="button">Auto-generate user information</button>
    <form id="main-form" novalidate>
      <label class="form-label" for="email-input">Email</label>
      <input id="email-input" type="text" autocomplete="off">
      <span class="error-info" id="email-error"></span>
      <label class="form-label" for="display-name-input">Display name (optional)</label>
      <input id="display-name-input" type="text" autocomplete="off">
      <label class="form-label" for="screen-name-input">Screen name (optional)</label>
      <input id="screen-name-input" type="text" autocomplete="off">
      <label class="form-label" for="profile-photo-input">Profile photo URL (optional)</label>
      <input id="profile-photo-input" type="text" autocomplete="off">
      <div id="main-action">
        <button id="back-button" type="button">Back</button>
        <button id="sign-in" type="submit" disabled>Sign in with <span class="js-provider-id">Provider</span></button>
      </div>
    </form>
  </div>
</div>
<script type="application/json" id="hearth-data">${inertJson(data)}</script>
<script src="/__/auth/handler.js"></script>
<script src="/__/auth/idp-widget.js"></script>
</body></html>`;
}
