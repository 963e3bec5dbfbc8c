/**
 * The two proofs phone sign-in and SMS second factors are built on, as interfaces so the calls that
 * need them (sendVerificationCode, mfaEnrollment:start, mfaSignIn:start) do not depend on how they
 * are made: Hearth's reCAPTCHA stand-in (auth/captcha/) and its SMS codes (auth/phone/).
 */

/** That a request comes from a person's browser: the token Hearth's reCAPTCHA stand-in hands the page. */
export interface HumanCheck {
  /**
   * Accepts a token once. Throws the identity errors MISSING_RECAPTCHA_TOKEN when there is none and
   * CAPTCHA_CHECK_FAILED when it is wrong, used or expired; in --dev any non-empty token passes, as
   * with Google's Auth emulator (the SDK's appVerificationDisabledForTesting sends a made-up one).
   */
  verify(projectId: string, token: string | undefined): Promise<void>;
  /** What getRecaptchaParam / recaptchaParams answer as `recaptchaSiteKey`. */
  siteKey(projectId: string): string;
}

/** Six-digit codes sent by SMS, named by an opaque `sessionInfo`. */
export interface PhoneCodes {
  /**
   * Sends a code to `phoneNumber` (E.164, already validated) and answers the `sessionInfo` that names
   * it. Limits per number and per client address answer QUOTA_EXCEEDED / TOO_MANY_ATTEMPTS_TRY_LATER.
   */
  send(projectId: string, phoneNumber: string, clientAddress: string): Promise<string>;
  /**
   * The phone number a code proves, once: INVALID_CODE for a wrong code (the session survives a few
   * tries), SESSION_EXPIRED for an expired one, INVALID_SESSION_INFO for an unknown, used or foreign
   * one, MISSING_CODE / MISSING_SESSION_INFO when absent.
   */
  redeem(projectId: string, sessionInfo: string | undefined, code: string | undefined): Promise<string>;
}
