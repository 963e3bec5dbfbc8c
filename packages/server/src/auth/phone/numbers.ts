import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { authError } from '../errors.js';

/**
 * Phone numbers as the identity API takes them: international form (`+` and the country code),
 * normalized to E.164 (`+16505553434`). Separators people type (spaces, dashes, dots, parentheses)
 * are accepted and dropped, as Google's backend normalizes them.
 *
 * The number must be *possible* by libphonenumber's metadata (a real country code and a length
 * that country uses), not *valid* (an assigned range): `isValid` refuses the fictional ranges people
 * test with (+1 555-555-0100, the UK's +44 7700 900xxx drama numbers), which Google accepts, and an
 * SMS provider refuses a number that truly does not exist anyway.
 */
const maxInputLength = 32;
const allowedCharacters = /^\+[0-9 ().\-]+$/;

/** The E.164 form of `text`, or undefined when it is not a possible international number. */
export function normalizePhoneNumber(text: string): string | undefined {
  if (text.length > maxInputLength || !allowedCharacters.test(text)) return undefined;
  const parsed = parsePhoneNumberFromString(text);
  if (!parsed || parsed.ext || !parsed.isPossible()) return undefined;
  // The parser is lenient (it extracts a number from text and may drop digits it takes for a
  // national prefix): the answer must be exactly the digits given.
  if (parsed.number.slice(1) !== text.replace(/\D/g, '')) return undefined;
  return parsed.number;
}

/**
 * The E.164 form of a phone number a request carries, or INVALID_PHONE_NUMBER, Google's answer
 * for a missing one as well (auth/invalid-phone-number; firebase-admin: the same code).
 */
export function requirePhoneNumber(text: string | undefined): string {
  const normalized = text === undefined ? undefined : normalizePhoneNumber(text);
  if (normalized === undefined) throw authError('INVALID_PHONE_NUMBER', 'Invalid format.');
  return normalized;
}

/** For lookups: the E.164 form when there is one, else the text as given (it then matches nothing stored). */
export function phoneLookupKey(text: string): string {
  return normalizePhoneNumber(text) ?? text;
}
