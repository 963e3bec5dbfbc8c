/**
 * What this server can do for the web app, learned once from init.json before the first render:
 * options that cannot work are not offered. An older server that says nothing keeps them offered.
 */
export interface SiteFeatures {
  /** The server can send text messages (an SMS provider, or the outbox in --dev). */
  textMessages: boolean;
  /** Phone sign-in is on for the project and texts can be sent. */
  phoneSignIn: boolean;
}

let features: SiteFeatures = { textMessages: true, phoneSignIn: true };

export function setSiteFeatures(listed: { textMessages?: unknown; phoneSignIn?: unknown }): void {
  features = {
    textMessages: typeof listed.textMessages === 'boolean' ? listed.textMessages : true,
    phoneSignIn: typeof listed.phoneSignIn === 'boolean' ? listed.phoneSignIn : true,
  };
}

export function siteFeatures(): SiteFeatures {
  return features;
}

/** Why a phone number cannot be used here, in words for the person at the page. */
export const noTextMessages = 'This site cannot send text messages (no SMS provider is set up), so phone numbers cannot be used to sign in or as a second step.';
