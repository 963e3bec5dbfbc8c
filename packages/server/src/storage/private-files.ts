import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Writes a secret file (mode 0600) so that after a crash or a full disk it holds either its old
 * contents or the new ones, never a prefix: a temporary file is written and fsynced, renamed over
 * the target, and the folder fsynced so the rename itself is durable. An empty admin key left by a
 * torn first start once made every caller an administrator.
 */
export function writePrivateFileAtomically(file: string, contents: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = openSync(temporary, 'w', 0o600);
  try {
    fchmodSync(handle, 0o600); // a stale temporary file from a crash keeps its old mode otherwise
    writeFileSync(handle, contents);
    fsyncSync(handle);
  } catch (error) {
    closeSync(handle);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(handle);
  renameSync(temporary, file);
  const folder = openSync(dirname(file), 'r');
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}

/**
 * A 32-byte key kept in the data folder (base64url, 0600), made on first use. A torn or emptied
 * file must not become a guessable key: it is refused rather than used.
 */
export function loadOrCreateKeyFile(dataDir: string, name: string): Buffer {
  const file = join(dataDir, name);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
    if (key.length < 32) throw new Error(`${file} holds no valid key (${key.length} bytes); delete it to have a new one made.`);
    return key;
  }
  const key = randomBytes(32);
  writePrivateFileAtomically(file, `${key.toString('base64url')}\n`);
  return key;
}
