import type { Logger } from 'pino';
import type { Mutation, OobRequestType, UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { MailDelivery, OutgoingMail } from '../mail/mailer.js';
import { pickLanguage, renderMail } from '../mail/templates.js';
import { authenticate, requireRecentLogin, type AuthDeps } from './auth-context.js';
import { askBeforeSend } from './blocking-functions.js';
import { ActionLinks, actionPagePath } from './action-links.js';
import { modeFor, type IssuedCode, type OobCodes } from './oob-codes.js';
import { guardOperatorAccount } from './operator-claim.js';
import type { ProjectConfig } from './project-config.js';
import type { Caller, SendOobCodeRequest } from './requests.js';
import type { FailureThrottle } from './throttle.js';
import { requireEmail } from './validation.js';
import { projectOf, tenantField, tenantOf } from '../tenants/realm.js';

const requestTypes = new Set<OobRequestType>(['PASSWORD_RESET', 'VERIFY_EMAIL', 'EMAIL_SIGNIN', 'VERIFY_AND_CHANGE_EMAIL']);

export interface SendResult {
  email: string;
  /** Only for administrators who asked for the link instead of a mail. */
  oobLink?: string;
  oobCode?: string;
}

interface Planned {
  requestType: OobRequestType;
  /** Where the mail goes. */
  recipient: string;
  /** The account's current address (what the code is bound to). */
  email: string;
  user: UserRecord | undefined;
  newEmail?: string;
  /** Nothing to send, but answer as if there were (enumeration protection). */
  silent: boolean;
}

export interface ActionMailOptions {
  /** The origin links point at (`--public-url`); never taken from a request's Host header. */
  publicUrl: () => string;
  /**
   * Links at the Auth emulator's `/emulator/action` (served in --dev) rather than the hosted action
   * page, as the emulator's own oobCodes are (`hearth start --dev`, cli/dev-defaults.ts).
   */
  emulatorLinks?: boolean;
}

/** The Auth emulator's link handler (core/action-emulator.ts), served in --dev. */
const emulatorActionPath = '/emulator/action';

/** sendOobCode / getOobConfirmationCode: issues an action code and mails its link. */
export class ActionMailer {
  private readonly pending = new Set<Promise<void>>();
  /** Where links may send the browser: checked when a mail is asked for and when its link is followed. */
  readonly links: ActionLinks;

  constructor(
    private readonly deps: AuthDeps,
    private readonly codes: OobCodes,
    private readonly mail: MailDelivery,
    /** Sends per recipient address, and (ten times as many) per client address. */
    private readonly sendThrottle: { recipient: FailureThrottle; client: FailureThrottle },
    private readonly options: ActionMailOptions,
    private readonly logger: Logger,
  ) {
    this.links = new ActionLinks(deps.projects, options.publicUrl);
  }

  async send(caller: Caller, request: SendOobCodeRequest): Promise<SendResult> {
    if (!request.requestType) throw authError('MISSING_REQ_TYPE');
    if (!requestTypes.has(request.requestType as OobRequestType)) throw authError('INVALID_REQ_TYPE');
    if (request.returnOobLink && !caller.isAdmin) throw authError('ADMIN_ONLY_OPERATION');
    const config = await this.deps.projects.config(caller.realm);
    const continueUrl = await this.links.forMail(caller.realm, request.continueUrl);
    const plan = await this.plan(caller, request as SendOobCodeRequest & { requestType: OobRequestType }, config);
    // A link handed to an administrator signs in as the account, or resets or moves its email: a
    // service account gets none for an operator account (operator-claim.ts).
    if (request.returnOobLink) guardOperatorAccount(caller, plan.user ?? (await this.deps.users.getByEmail(caller.realm, plan.email)));

    // Throttled per recipient whether or not an account exists, so the limit tells nothing either.
    if (!request.returnOobLink) {
      // Per project, not per tenant: an inbox is not flooded once for each of a project's tenants.
      const recipientKey = `${projectOf(caller.realm)}\u0000${plan.recipient}`;
      const clientKey = `${projectOf(caller.realm)}\u0000${caller.clientIp}`;
      await Promise.all([this.sendThrottle.recipient.refresh([recipientKey]), this.sendThrottle.client.refresh([clientKey])]);
      if (this.sendThrottle.recipient.isBlocked(recipientKey) || this.sendThrottle.client.isBlocked(clientKey)) {
        throw authError(plan.requestType === 'PASSWORD_RESET' ? 'RESET_PASSWORD_EXCEED_LIMIT' : 'QUOTA_EXCEEDED');
      }
      this.sendThrottle.recipient.recordFailure(recipientKey);
      this.sendThrottle.client.recordFailure(clientKey);
      // beforeEmailSent, for the two kinds Google calls it for, whether or not an account exists
      // (its answer must not tell either); a link handed to an administrator sends no mail.
      const emailType = plan.requestType === 'PASSWORD_RESET' ? 'PASSWORD_RESET' : plan.requestType === 'EMAIL_SIGNIN' ? 'EMAIL_SIGN_IN' : undefined;
      if (emailType) await askBeforeSend(this.deps.blocking, { eventType: 'beforeSendEmail', realm: caller.realm, email: plan.recipient, emailType, ipAddress: caller.clientIp });
    }
    // Answered once the mail is stored, so an acknowledged mail survives a crash. With enumeration
    // protection on, an unknown address gets the same work and write (a decoy, never sent), so
    // neither the answer nor its timing tells whether an account exists.
    const issued = await this.issueAndDeliver(caller, plan, config, continueUrl, !request.returnOobLink);
    return request.returnOobLink && issued ? { email: plan.email, oobLink: issued.link, oobCode: issued.code } : { email: plan.email };
  }

  /** Mails an email-change recovery link to the old address (after a change was applied). */
  recoverEmailLater(caller: Caller, user: UserRecord, oldEmail: string, config: ProjectConfig): void {
    const plan = recoveryPlan(user, oldEmail, user.email!);
    this.inBackground(() => this.issueAndDeliver(caller, plan, config, undefined, true));
  }

  /**
   * A recovery code for an email change that is about to be committed: its mutation goes into the
   * same commit as the change (so it exists whenever the change does); the mail follows after.
   */
  prepareRecovery(caller: Caller, user: UserRecord, oldEmail: string, newEmail: string, config: ProjectConfig): { mutation: Mutation; mailLater: () => void } {
    const plan = recoveryPlan(user, oldEmail, newEmail);
    const issued = this.codes.issue(caller.realm, plan.requestType, plan.email, plan.user, plan.newEmail);
    return { mutation: issued.mutation, mailLater: () => this.inBackground(() => this.mail.commitAndSend([this.mail.queue(this.compose(caller, plan, config, undefined, issued))])) };
  }

  /**
   * Like prepareRecovery, with the mail in the mutations too: committed with the email change, the
   * owner's way back exists (and is delivered) whenever the change does, even across a crash.
   * `committed` hands the mail to delivery once that commit resolved.
   */
  prepareRecoveryWithMail(caller: Caller, user: UserRecord, oldEmail: string, newEmail: string, config: ProjectConfig): { mutations: Mutation[]; committed: () => void } {
    const plan = recoveryPlan(user, oldEmail, newEmail);
    const issued = this.codes.issue(caller.realm, plan.requestType, plan.email, plan.user, plan.newEmail);
    return { mutations: [issued.mutation, this.mail.queue(this.compose(caller, plan, config, undefined, issued))], committed: () => this.mail.wake() };
  }

  /** Waits for mails still being issued and the delivery attempt in progress (shutdown loses nothing). */
  async drain(): Promise<void> {
    while (this.pending.size) await Promise.allSettled([...this.pending]);
    await this.mail.settle();
  }

  private async plan(caller: Caller, request: SendOobCodeRequest & { requestType: OobRequestType }, config: ProjectConfig): Promise<Planned> {
    const { users } = this.deps;
    const privacy = config.emailPrivacyConfig.enableImprovedEmailPrivacy && !caller.isAdmin;
    switch (request.requestType) {
      case 'PASSWORD_RESET': {
        const email = requireEmail(request.email);
        const user = await users.getByEmail(caller.realm, email);
        if (!user && !privacy) throw authError('EMAIL_NOT_FOUND');
        if (user?.disabled && !privacy) throw authError('USER_DISABLED');
        return { requestType: 'PASSWORD_RESET', recipient: email, email, user, silent: !user || user.disabled };
      }
      case 'EMAIL_SIGNIN': {
        if (config.signIn.email.passwordRequired || !config.signIn.email.enabled) throw authError('OPERATION_NOT_ALLOWED');
        if (!request.continueUrl) throw authError('MISSING_CONTINUE_URI');
        const email = requireEmail(request.email);
        const user = await users.getByEmail(caller.realm, email);
        if (user?.disabled && !privacy) throw authError('USER_DISABLED');
        return { requestType: 'EMAIL_SIGNIN', recipient: email, email, user: undefined, silent: user?.disabled === true };
      }
      case 'VERIFY_EMAIL': {
        const user = await this.subject(caller, request);
        if (!user.email) throw authError('MISSING_EMAIL');
        return { requestType: 'VERIFY_EMAIL', recipient: user.email, email: user.email, user, silent: false };
      }
      case 'VERIFY_AND_CHANGE_EMAIL': {
        const user = await this.subject(caller, request, true);
        if (!request.newEmail) throw authError('MISSING_NEW_EMAIL');
        const newEmail = requireEmail(request.newEmail);
        const taken = (await users.getByEmail(caller.realm, newEmail)) !== undefined;
        if (taken && !privacy) throw authError('EMAIL_EXISTS');
        return { requestType: 'VERIFY_AND_CHANGE_EMAIL', recipient: newEmail, email: user.email ?? '', newEmail, user, silent: taken };
      }
      default:
        throw authError('INVALID_REQ_TYPE');
    }
  }

  /** The account a verification concerns: the ID token's owner, or for administrators an email. */
  private async subject(caller: Caller, request: SendOobCodeRequest, sensitive = false): Promise<UserRecord> {
    if (request.idToken !== undefined || !caller.isAdmin) {
      const { claims, user } = await authenticate(this.deps, caller, request.idToken);
      if (sensitive && claims.firebase.sign_in_provider !== 'anonymous') requireRecentLogin(this.deps, claims);
      return user;
    }
    const user = await this.deps.users.getByEmail(caller.realm, requireEmail(request.email));
    if (!user) throw authError('EMAIL_NOT_FOUND');
    return user;
  }

  private async issueAndDeliver(caller: Caller, plan: Planned, config: ProjectConfig, continueUrl: string | undefined, mailIt: boolean): Promise<{ code: string; link: string } | undefined> {
    // A silent request stores a code too (bound to no account and never sent, so unusable): the
    // same write as a real one, so the server's work does not tell either.
    const issued = this.codes.issue(caller.realm, plan.requestType, plan.email, plan.silent ? undefined : plan.user, plan.newEmail);
    if (!mailIt) {
      await this.codes.save(issued);
      if (plan.silent) return undefined;
      return { code: issued.code, link: this.linkFor(plan.requestType, issued.code, caller, config, pickLanguage(caller.languageCode), continueUrl) };
    }
    // The code and its mail in one commit: stored together or not at all.
    const mail = this.compose(caller, plan, config, continueUrl, issued);
    await this.mail.commitAndSend([issued.mutation, this.mail.queue(mail, { decoy: plan.silent })]);
    return plan.silent ? undefined : { code: issued.code, link: mail.oobLink };
  }

  private compose(caller: Caller, plan: Planned, config: ProjectConfig, continueUrl: string | undefined, issued: IssuedCode): OutgoingMail {
    const { code } = issued;
    const language = pickLanguage(caller.languageCode);
    const link = this.linkFor(plan.requestType, code, caller, config, language, continueUrl);
    const content = renderMail({
      requestType: plan.requestType,
      language,
      projectName: config.mail.projectName,
      email: plan.requestType === 'RECOVER_EMAIL' ? plan.newEmail! : plan.recipient,
      link,
    });
    return { ...content, from: config.mail.from, to: plan.recipient, projectId: caller.realm, ...tenantField(caller.realm), requestType: plan.requestType, oobCode: code, oobLink: link, expiresAt: issued.record.expiresAt };
  }

  private linkFor(requestType: OobRequestType, code: string, caller: Caller, config: ProjectConfig, language: string, continueUrl: string | undefined): string {
    const url = new URL(this.options.emulatorLinks ? emulatorActionPath : actionPagePath, this.options.publicUrl());
    url.searchParams.set('mode', modeFor[requestType]);
    url.searchParams.set('oobCode', code);
    url.searchParams.set('apiKey', caller.apiKey ?? config.apiKeys[0] ?? '');
    url.searchParams.set('lang', language);
    // The SDK's ActionCodeURL reads the tenant from the link (and refuses it in another tenant).
    const tenantId = tenantOf(caller.realm);
    if (tenantId !== undefined) url.searchParams.set('tenantId', tenantId);
    if (continueUrl) url.searchParams.set('continueUrl', continueUrl);
    return url.toString();
  }

  private inBackground(work: () => Promise<unknown>): void {
    const job = work().then(
      () => undefined,
      (err: unknown) => this.logger.error({ err: { message: (err as Error).message } }, 'action mail failed'),
    );
    this.pending.add(job);
    void job.finally(() => this.pending.delete(job));
  }
}

/** The recovery of an email change: mailed to the old address, about the new one. */
function recoveryPlan(user: UserRecord, oldEmail: string, newEmail: string): Planned {
  return { requestType: 'RECOVER_EMAIL', recipient: oldEmail, email: oldEmail, newEmail, user, silent: false };
}
