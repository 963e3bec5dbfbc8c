import { authError } from '../errors.js';

/**
 * Our specification's email rule: text@text. Deliberately loose, as Google's own check is:
 * one @, something on both sides, no spaces.
 */
const emailPattern = /^[^@\s]+@[^@\s]+$/;
export const minimumPasswordLength = 6;
const maxEmailLength = 254;
const maxPasswordLength = 4096;
const maxDisplayNameLength = 256;
const maxPhotoUrlLength = 2048;

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function isValidEmail(email: string): boolean {
  return email.length <= maxEmailLength && emailPattern.test(email);
}

/** Returns the normalized email or throws MISSING_EMAIL / INVALID_EMAIL. */
export function requireEmail(email: string | undefined): string {
  if (email === undefined || email === '') throw authError('MISSING_EMAIL');
  const normalized = normalizeEmail(email);
  if (!isValidEmail(normalized)) throw authError('INVALID_EMAIL');
  return normalized;
}

export function requireNewPassword(password: string | undefined): string {
  if (password === undefined || password === '') throw authError('MISSING_PASSWORD');
  if (password.length < minimumPasswordLength) throw authError('WEAK_PASSWORD');
  if (password.length > maxPasswordLength) throw authError('WEAK_PASSWORD', `Password should be at most ${maxPasswordLength} characters`);
  return password;
}

export function checkDisplayName(displayName: string): string {
  if (displayName.length > maxDisplayNameLength) throw authError('INVALID_DISPLAY_NAME');
  return displayName;
}

/**
 * Google stores any string as a photo URL (apps and emulator-based tests set values such as
 * 'photo-url'); only its length is bounded. Whoever shows it decides how to treat it.
 */
export function checkPhotoUrl(photoUrl: string): string {
  if (photoUrl.length > maxPhotoUrlLength) throw authError('INVALID_PHOTO_URL');
  return photoUrl;
}

const maxLocalIdLength = 128;
export function checkLocalId(localId: string): string {
  if (localId.length === 0) throw authError('MISSING_LOCAL_ID');
  if (localId.length > maxLocalIdLength) throw authError('INVALID_LOCAL_ID');
  return localId;
}
