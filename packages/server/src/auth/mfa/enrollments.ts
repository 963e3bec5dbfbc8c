import { randomInt } from 'node:crypto';
import type { MfaEnrollmentRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import { normalizePhoneNumber } from '../phone/numbers.js';

/** Google's ceiling on second factors per account (SECOND_FACTOR_LIMIT_EXCEEDED beyond). */
export const maxEnrollments = 5;
const maxDisplayNameLength = 256;
const idAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** One enrolment as the identity API shows it (GoogleCloudIdentitytoolkitV1MfaEnrollment). */
export interface MfaEnrollmentWire {
  mfaEnrollmentId: string;
  displayName?: string;
  /** RFC 3339. */
  enrolledAt: string;
  phoneInfo?: string;
  /** Present (empty) for a TOTP factor: the SDKs tell the kind by which field is there. */
  totpInfo?: Record<string, never>;
}

/** The second factor kinds, as the SDKs and the ID token's `firebase.sign_in_second_factor` name them. */
export type FactorId = 'phone' | 'totp';

export function factorIdOf(enrollment: MfaEnrollmentRecord): FactorId {
  return enrollment.totpInfo ? 'totp' : 'phone';
}

/**
 * Enrolments for the wire. Secrets never leave (a TOTP factor shows only that it is one); the phone
 * number is shown in full to its owner and administrators, and masked after a first factor only
 * (`obfuscatePhone`), where whoever knows the password would otherwise learn it.
 */
export function enrollmentsForWire(enrollments: MfaEnrollmentRecord[], options: { obfuscatePhone: boolean }): MfaEnrollmentWire[] {
  return enrollments.map((enrollment) => {
    const wire: MfaEnrollmentWire = { mfaEnrollmentId: enrollment.mfaEnrollmentId, enrolledAt: new Date(enrollment.enrolledAt).toISOString() };
    if (enrollment.displayName) wire.displayName = enrollment.displayName;
    if (enrollment.totpInfo) wire.totpInfo = {};
    else if (enrollment.phoneInfo) wire.phoneInfo = options.obfuscatePhone ? obfuscatePhoneNumber(enrollment.phoneInfo) : enrollment.phoneInfo;
    return wire;
  });
}

/** All but the last four digits starred, as Google shows a factor's number before the second factor. */
export function obfuscatePhoneNumber(phoneNumber: string): string {
  let digits = 0;
  return [...phoneNumber]
    .reverse()
    .map((c) => (/\d/.test(c) && ++digits > 4 ? '*' : c))
    .reverse()
    .join('');
}

/** A fresh enrolment id, unique within the account. */
export function newEnrollmentId(existing: MfaEnrollmentRecord[]): string {
  const taken = new Set(existing.map((e) => e.mfaEnrollmentId));
  for (;;) {
    let id = '';
    for (let i = 0; i < 28; i++) id += idAlphabet[randomInt(idAlphabet.length)];
    if (!taken.has(id)) return id;
  }
}

/** A second factor's number in E.164, by the same check as phone sign-in's; undefined when it is none. */
export function e164(text: string | undefined): string | undefined {
  return text ? normalizePhoneNumber(text) : undefined;
}

export function checkFactorDisplayName(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return undefined;
  if (name.length > maxDisplayNameLength) throw authError('INVALID_DISPLAY_NAME');
  return name;
}

/** An enrolment as firebase-admin sends it (createUser's mfaInfo, updateUser's mfa.enrollments). */
export interface AdminEnrollment {
  mfaEnrollmentId?: string;
  displayName?: string;
  phoneInfo?: string;
  /** RFC 3339. */
  enrolledAt?: string;
}

/**
 * The account's second factors as an administrator sets them: the list replaces the current one.
 * Phone factors are given by number (a known id keeps its enrolment time); an entry naming an
 * existing enrolment without a number keeps that factor as it is (how a TOTP factor, whose secret
 * an administrator never sees, survives an update).
 */
export function enrollmentsFromAdmin(given: AdminEnrollment[], current: MfaEnrollmentRecord[], now: number): MfaEnrollmentRecord[] {
  if (given.length > maxEnrollments) throw authError('SECOND_FACTOR_LIMIT_EXCEEDED');
  const result: MfaEnrollmentRecord[] = [];
  for (const entry of given) {
    const existing = entry.mfaEnrollmentId !== undefined ? current.find((e) => e.mfaEnrollmentId === entry.mfaEnrollmentId) : undefined;
    if (entry.mfaEnrollmentId !== undefined && (entry.mfaEnrollmentId === '' || entry.mfaEnrollmentId.length > 128)) {
      throw authError('INVALID_MFA_ENROLLMENT_ID', 'mfaEnrollmentId must be 1 to 128 characters.');
    }
    if (entry.mfaEnrollmentId !== undefined && result.some((e) => e.mfaEnrollmentId === entry.mfaEnrollmentId)) throw authError('DUPLICATE_MFA_ENROLLMENT_ID');
    const displayName = checkFactorDisplayName(entry.displayName);
    const enrolledAt = entry.enrolledAt !== undefined ? rfc3339(entry.enrolledAt) : (existing?.enrolledAt ?? now);
    if (entry.phoneInfo === undefined) {
      if (!existing) throw authError('INVALID_MFA_PHONE_NUMBER', 'Invalid format.');
      result.push({ ...existing, ...(displayName !== undefined ? { displayName } : {}), enrolledAt });
      continue;
    }
    const phoneInfo = e164(entry.phoneInfo);
    if (!phoneInfo) throw authError('INVALID_MFA_PHONE_NUMBER', 'Invalid format.');
    if (result.some((e) => e.phoneInfo === phoneInfo)) continue; // the same number twice is one factor, as Google keeps it
    const record: MfaEnrollmentRecord = {
      mfaEnrollmentId: entry.mfaEnrollmentId ?? newEnrollmentId([...current, ...result]),
      enrolledAt,
      phoneInfo,
    };
    if (displayName !== undefined) record.displayName = displayName;
    result.push(record);
  }
  return result;
}

function rfc3339(text: string): number {
  const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(text) ? Date.parse(text) : NaN;
  if (!Number.isFinite(time)) throw authError('INVALID_ENROLLMENT_TIME', 'enrolledAt must be an RFC 3339 time.');
  return time;
}
