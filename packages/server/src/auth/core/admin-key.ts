import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFileAtomically } from '../../storage/private-files.js';

/**
 * The administrator's key: HEARTH_ADMIN_KEY, or the data folder's `admin-key` (made on first start,
 * written atomically, 0600). A key too short or with spaces refuses the start.
 */

/** Shorter keys can be guessed; an empty one (a torn write) would match an empty credential. */
export const minAdminKeyLength = 32;

export function loadOrCreateAdminKey(dataDir: string): string {
  const file = join(dataDir, 'admin-key');
  if (existsSync(file)) return checkedAdminKey(readFileSync(file, 'utf8').trim(), file);
  const key = randomBytes(32).toString('base64url');
  writePrivateFileAtomically(file, `${key}\n`);
  return key;
}

export function checkedAdminKey(key: string, from: string): string {
  if (key.length < minAdminKeyLength || /\s/.test(key)) {
    throw new Error(`The admin key in ${from} must be at least ${minAdminKeyLength} characters without spaces (it has ${key.length}); delete the file to have a new one made, or set HEARTH_ADMIN_KEY.`);
  }
  return key;
}
