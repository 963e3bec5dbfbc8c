/**
 * The mail rows of the one storage interface (store.ts): action codes (email links) and the outbox
 * every mail goes through. Their own file because they are their own subject, not a store of their
 * own: they are read with Store's getters and written through its commit like every other row.
 */

export type OobRequestType = 'PASSWORD_RESET' | 'VERIFY_EMAIL' | 'EMAIL_SIGNIN' | 'VERIFY_AND_CHANGE_EMAIL' | 'RECOVER_EMAIL';

/** An action code (email link). Only its hash is kept; the code itself lives in the mail. */
export interface OobCodeRecord {
  codeHash: string;
  projectId: string;
  requestType: OobRequestType;
  /** The address the code was sent to (for VERIFY_AND_CHANGE_EMAIL, the current one). */
  email: string;
  /** VERIFY_AND_CHANGE_EMAIL: the address to change to. RECOVER_EMAIL: the address to undo. */
  newEmail?: string;
  localId?: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  expiresAt: number;
  /** The account's passwordUpdatedAt when issued: a password change kills the code. */
  passwordUpdatedAt?: number;
}

/**
 * Where a mail is on its way. `kept`: delivered to the outbox (no SMTP); `queued`: waiting for an
 * SMTP attempt (again, after a failed one); `sent`: accepted by the SMTP server (kept only when the
 * outbox keeps copies); `failed`: given up (refused for good, or its link expired first).
 */
export type MailState = 'kept' | 'queued' | 'sent' | 'failed';

export interface MailDeliveryStatus {
  state: MailState;
  /** SMTP attempts made so far. */
  attempts: number;
  /** Milliseconds since the epoch: when a queued mail is tried next. */
  nextAttemptAt?: number;
  /** The last SMTP failure, without the message (it holds the link). */
  lastError?: string;
  sentAt?: number;
}

/**
 * A mail in the outbox: every mail is stored here before sendOobCode answers, so an acknowledged
 * mail survives a crash; SMTP delivery works from these rows, and failures stay visible here.
 */
export interface OutboxMessage {
  id: number;
  projectId: string;
  /** The tenant whose account the mail is for, if any. */
  tenantId?: string;
  from?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  requestType: OobRequestType;
  oobCode: string;
  oobLink: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** The link's code dies then: there is no point delivering the mail later. */
  expiresAt?: number;
  delivery: MailDeliveryStatus;
}
