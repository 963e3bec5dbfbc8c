import { ApiError } from '../../http/api-error.js';
import type { OobRequestType } from '../../storage/store.js';
import type { ActionCodeService } from './action-codes.js';
import { handBackLocation, type ActionLinks } from './action-links.js';
import type { Caller } from './requests.js';

/**
 * What `GET /emulator/action` answers: Google's Auth emulator's link handler (firebase-tools
 * src/emulator/auth/handlers.ts), so apps and tests written against the emulator's links work
 * unchanged in --dev. Its answers are the emulator's own (`{"authEmulator": {...}}`), and it acts
 * on a plain GET as the emulator does, which is why it is served in --dev only. Unlike the
 * emulator, a continueUrl is followed only on an authorized domain.
 */
export type EmulatorActionAnswer = { redirect: string } | { status: 200 | 400; body: { authEmulator: Record<string, string> } };

interface ModeText {
  requestType: OobRequestType;
  /** The emulator's sentence for a used, expired or mismatched code, and what to do about it. */
  used: string;
  retry: string;
  success: string;
}

const modes: Record<string, ModeText> = {
  verifyEmail: {
    requestType: 'VERIFY_EMAIL',
    used: 'Your request to verify your email has expired or the link has already been used.',
    retry: 'Try verifying your email again.',
    success: 'The email has been successfully verified.',
  },
  verifyAndChangeEmail: {
    requestType: 'VERIFY_AND_CHANGE_EMAIL',
    used: 'Your request to change your email has expired or the link has already been used.',
    retry: 'Try changing your email again.',
    success: 'The email has been successfully changed.',
  },
  recoverEmail: {
    requestType: 'RECOVER_EMAIL',
    used: 'Your request to revert your email has expired or the link has already been used.',
    retry: "If you're trying to test the reverting email flow, try changing the email again to generate a new link.",
    success: 'The email has been successfully reset.',
  },
  resetPassword: {
    requestType: 'PASSWORD_RESET',
    used: 'Your request to reset your password has expired or the link has already been used.',
    retry: 'Try resetting your password again.',
    success: 'The password has been successfully updated.',
  },
};

const newPasswordPlaceholder = 'NEW_PASSWORD_HERE';

function refusal(fields: Record<string, string>): EmulatorActionAnswer {
  return { status: 400, body: { authEmulator: fields } };
}

const unauthorizedContinueUrl = refusal({
  error: 'continueUrl is not on an authorized domain',
  instructions: "Add the URL's domain to the project's authorizedDomains, or ask for a new link.",
});

export class EmulatorActionHandler {
  constructor(
    private readonly links: ActionLinks,
    private readonly actions: ActionCodeService,
  ) {}

  /** `link` is the address as requested (public origin, path and query), for the reset instructions. */
  async answer(query: URLSearchParams, link: string, clientIp: string): Promise<EmulatorActionAnswer> {
    const apiKey = query.get('apiKey');
    const oobCode = query.get('oobCode');
    if (!apiKey) return refusal({ error: 'missing apiKey query parameter', instructions: 'Please modify the URL to specify an apiKey, such as ...&apiKey=YOUR_API_KEY' });
    if (!oobCode) return refusal({ error: 'missing oobCode query parameter', instructions: 'Please modify the URL to specify an oobCode, such as ...&oobCode=YOUR_OOB_CODE' });
    const projectId = this.links.projectFor(apiKey);
    if (projectId === undefined) return refusal({ error: 'INVALID_API_KEY', instructions: 'Use the API key of a project on this server.' });
    const realm = this.links.realmOf(projectId, query.get('tenantId'));
    if (realm === undefined) return refusal({ error: 'TENANT_NOT_FOUND', instructions: 'The link names a tenant this project does not have.' });

    const mode = query.get('mode') ?? '';
    const continueUrl = query.get('continueUrl');
    const allowed = await this.links.allowedContinueUrl(query);
    if (continueUrl && allowed === undefined) return unauthorizedContinueUrl;
    if (mode === 'signIn') {
      if (!allowed) return refusal({ error: 'Missing continueUrl query parameter', instructions: 'To sign in, append &continueUrl=YOUR_APP_URL to the link.' });
      return { redirect: handBackLocation(allowed, query) };
    }
    const text = modes[mode];
    if (!text) return refusal({ error: 'Invalid mode' });

    const caller: Caller = { realm, isAdmin: false, clientIp, apiKey, ...languageOf(query) };
    try {
      const info = await this.actions.inspect(caller, oobCode);
      if (info.requestType !== text.requestType) {
        return refusal({ error: mode === 'recoverEmail' ? 'Requested mode does not match the OOB code provided.' : text.used, instructions: text.retry });
      }
      let done: Record<string, string>;
      if (mode === 'resetPassword') {
        const newPassword = query.get('newPassword');
        if (!newPassword || newPassword === newPasswordPlaceholder) return resetInstructions(link, info.email, newPassword);
        const reset = await this.actions.resetPassword(caller, { oobCode, newPassword });
        done = { email: reset.email };
      } else {
        const user = await this.actions.apply(caller, oobCode);
        done = mode === 'verifyAndChangeEmail' ? { newEmail: user.email ?? '' } : { email: user.email ?? '' };
      }
      return allowed ? { redirect: allowed } : { status: 200, body: { authEmulator: { success: text.success, ...done } } };
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const code = err.wireMessage.split(' : ')[0]!;
      if (code === 'INVALID_OOB_CODE' || code === 'EXPIRED_OOB_CODE') return refusal({ error: text.used, instructions: text.retry });
      return refusal({ error: err.wireMessage, instructions: text.retry });
    }
  }
}

function resetInstructions(link: string, email: string, given: string | null): EmulatorActionAnswer {
  const template = new URL(link);
  template.searchParams.delete('newPassword');
  const urlTemplate = `${template.toString()}&newPassword=${newPasswordPlaceholder}`;
  if (given === newPasswordPlaceholder) {
    return refusal({
      error: `newPassword must be something other than '${newPasswordPlaceholder}'`,
      instructions: `The string '${newPasswordPlaceholder}' is just a placeholder.`,
      instructions2: 'Please change the URL to specify a new password instead.',
      urlTemplate,
    });
  }
  return refusal({
    error: 'missing newPassword query parameter',
    instructions: `To reset the password for ${email}, send an HTTP GET request to the following URL.`,
    instructions2: 'You may use a web browser or any HTTP client, such as curl.',
    urlTemplate,
  });
}

function languageOf(query: URLSearchParams): { languageCode?: string } {
  const lang = query.get('lang');
  return lang && /^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/.test(lang) ? { languageCode: lang } : {};
}
