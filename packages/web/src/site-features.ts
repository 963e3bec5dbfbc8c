/**
 * What this server can do for the web app, learned once from init.json before the first render:
 * options that cannot work are not offered. An older server that says nothing keeps them offered.
 */
export interface SiteFeatures {
  /** The server can send text messages (an SMS provider, or the outbox in --dev). */
  textMessages: boolean;
  /** Phone sign-in is on for the project and texts can be sent. */
  phoneSignIn: boolean;
  /** How recent a sign-in must be to change email or password or delete the account, if the server says. */
  recentLoginSeconds?: number;
}

let features: SiteFeatures = { textMessages: true, phoneSignIn: true };

export function setSiteFeatures(listed: { textMessages?: unknown; phoneSignIn?: unknown; recentLoginSeconds?: unknown }): void {
  features = {
    textMessages: typeof listed.textMessages === 'boolean' ? listed.textMessages : true,
    phoneSignIn: typeof listed.phoneSignIn === 'boolean' ? listed.phoneSignIn : true,
    ...(typeof listed.recentLoginSeconds === 'number' && listed.recentLoginSeconds > 0 ? { recentLoginSeconds: listed.recentLoginSeconds } : {}),
  };
}

function span(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} second${Math.round(seconds) === 1 ? '' : 's'}`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.round(minutes / 60);
  return `${hours} hour${hours === 1 ? '' : 's'}`;
}

/** "You signed in 7 minutes ago; ... within the last 5 minutes": the real times, not "a while ago". */
export function signedInAgo(lastSignInTime: string | undefined, now = Date.now()): string {
  const at = lastSignInTime ? Date.parse(lastSignInTime) : NaN;
  const ago = Number.isNaN(at) ? 'You signed in some time ago' : `You signed in ${span((now - at) / 1000)} ago`;
  const window = features.recentLoginSeconds;
  return window ? `${ago}; this site asks for a sign-in within the last ${span(window)}` : ago;
}

export function siteFeatures(): SiteFeatures {
  return features;
}

/** Why a phone number cannot be used here, in words for the person at the page. */
export const noTextMessages = 'This site cannot send text messages (no SMS provider is set up), so phone numbers cannot be used to sign in or as a second step.';
