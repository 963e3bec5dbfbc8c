import { toAccountInfo, type AccountInfo } from '../core/account-view.js';
import type { CreateAuthUriResult, UpdateResult } from '../core/accounts.js';
import type { RefreshResult, SignInResult, SignUpResult } from '../core/sessions.js';
import type { UserRecord } from '../../storage/store.js';

/** Wire shapes of the identity API's answers, as Google's Identity Toolkit sends them. */

export function signUpResponse({ user, tokens }: SignUpResult): Record<string, unknown> {
  return { kind: 'identitytoolkit#SignupNewUserResponse', localId: user.localId, email: user.email ?? '', ...tokens };
}

export function signInResponse({ user, tokens }: SignInResult): Record<string, unknown> {
  return {
    kind: 'identitytoolkit#VerifyPasswordResponse',
    localId: user.localId,
    email: user.email ?? '',
    displayName: user.displayName ?? '',
    registered: true,
    ...(user.photoUrl ? { profilePicture: user.photoUrl } : {}),
    ...tokens,
  };
}

export function lookupResponse(users: UserRecord[]): { kind: string; users?: AccountInfo[] } {
  const response: { kind: string; users?: AccountInfo[] } = { kind: 'identitytoolkit#GetAccountInfoResponse' };
  if (users.length) response.users = users.map(toAccountInfo);
  return response;
}

export function updateResponse({ user, tokens }: UpdateResult): Record<string, unknown> {
  const response: Record<string, unknown> = {
    kind: 'identitytoolkit#SetAccountInfoResponse',
    localId: user.localId,
    emailVerified: user.emailVerified,
    providerUserInfo: user.providerUserInfo.map((p) => ({
      providerId: p.providerId,
      federatedId: p.federatedId ?? p.rawId,
      ...(p.displayName ? { displayName: p.displayName } : {}),
      ...(p.photoUrl ? { photoUrl: p.photoUrl } : {}),
    })),
    ...tokens,
  };
  if (user.email) response.email = user.email;
  if (user.displayName) response.displayName = user.displayName;
  if (user.photoUrl) response.photoUrl = user.photoUrl;
  return response;
}

export function createAuthUriResponse(result: CreateAuthUriResult): Record<string, unknown> {
  return { kind: 'identitytoolkit#CreateAuthUriResponse', ...result };
}

export function tokenResponse(result: RefreshResult): Record<string, string> {
  return {
    access_token: result.idToken,
    expires_in: result.expiresIn,
    token_type: 'Bearer',
    refresh_token: result.refreshToken,
    id_token: result.idToken,
    user_id: result.user.localId,
    project_id: result.projectId,
  };
}
