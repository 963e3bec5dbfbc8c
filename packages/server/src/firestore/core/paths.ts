import { firestoreErrors } from './errors.js';
import { checkReservedId } from './resource-names.js';
import { isWellFormed } from './values.js';

/** `projects/{p}/databases/{d}`: data is kept per database. */
export interface DatabaseId {
  projectId: string;
  databaseId: string;
}

export function databaseName(db: DatabaseId): string {
  return `projects/${db.projectId}/databases/${db.databaseId}`;
}

export function documentsRoot(db: DatabaseId): string {
  return `${databaseName(db)}/documents`;
}

const projectPattern = /^[a-z0-9][a-z0-9-]{0,62}$|^demo-[a-z0-9-]+$/;
/** Google's database ids: `(default)`, or 4 to 63 lowercase letters, digits and hyphens, from a letter to a letter or digit. */
const databasePattern = /^\(default\)$|^[a-z][a-z0-9-]{2,61}[a-z0-9]$/;
/** Google's emulator takes shorter ids too (the SDK's own multi-database tests use `db1`, `db2`): up to 63 letters, digits, `-` and `_`. */
const emulatorDatabasePattern = /^\(default\)$|^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** Which database ids are taken: production's rule, or (--dev) the emulator's (FirestoreAccess.databaseIdRule). */
export type DatabaseIdRule = 'production' | 'emulator';

/**
 * `projects/{p}/databases/{d}` (with `underDocuments`, also followed by `/documents…`), checked;
 * undefined when the text is not shaped so.
 */
export function parseDatabaseName(text: string, underDocuments: boolean, rule: DatabaseIdRule = 'production'): DatabaseId | undefined {
  const match = (underDocuments ? /^projects\/([^/]+)\/databases\/([^/]+)(?:\/documents(?:\/.*)?)?$/ : /^projects\/([^/]+)\/databases\/([^/]+)$/).exec(text);
  return match ? checkDatabase(match[1]!, match[2]!, rule) : undefined;
}

export function checkDatabase(projectId: string, databaseId: string, rule: DatabaseIdRule = 'production'): DatabaseId {
  if (!projectPattern.test(projectId)) throw firestoreErrors.invalidArgument(`Invalid project ID: ${projectId}`);
  // Google's message, as its servers answer it (e.g. "Invalid database id [object Object]", firebase-js-sdk issue 7104).
  if (!(rule === 'emulator' ? emulatorDatabasePattern : databasePattern).test(databaseId)) throw firestoreErrors.invalidArgument(`Invalid database id ${databaseId}`);
  return { projectId, databaseId };
}

const maxIdBytes = 1500;
const maxNameBytes = 6 * 1024;

/**
 * Splits a relative path (`users/u1/posts`) into checked segments: not empty, not `.` or `..`,
 * not reserved `__x__` (numeric document ids excepted), at most 1,500 bytes.
 */
export function pathSegments(relative: string): string[] {
  if (relative === '') return [];
  if (Buffer.byteLength(relative) > maxNameBytes) throw firestoreErrors.invalidArgument('Document name is longer than 6 KiB.');
  const segments = relative.split('/');
  for (const [index, segment] of segments.entries()) {
    if (segment === '') throw firestoreErrors.invalidArgument(`Invalid path "${relative}": a path cannot contain empty segments.`);
    if (segment === '.' || segment === '..') throw firestoreErrors.invalidArgument(`Invalid path "${relative}": "${segment}" is not a valid ID.`);
    checkReservedId(segment, index % 2 === 1);
    if (Buffer.byteLength(segment) > maxIdBytes) throw firestoreErrors.invalidArgument(`ID "${segment.slice(0, 20)}…" is longer than 1500 bytes.`);
    if (!isWellFormed(segment)) throw firestoreErrors.invalidArgument(`Path ${relative} is not valid UTF-8.`);
  }
  return segments;
}

/** A document: an even number of segments under `…/documents`. */
export interface DocumentKey {
  /** `users/u1` */
  path: string;
  /** The collection path, `users`. */
  parent: string;
  collectionId: string;
  id: string;
}

export function documentKey(relative: string): DocumentKey {
  const segments = pathSegments(relative);
  if (segments.length === 0 || segments.length % 2 !== 0) {
    throw firestoreErrors.invalidArgument(`Document name "${relative}" has ${segments.length} segments; a document path needs an even number.`);
  }
  return keyFromSegments(segments);
}

export function keyFromSegments(segments: readonly string[]): DocumentKey {
  return {
    path: segments.join('/'),
    parent: segments.slice(0, -1).join('/'),
    collectionId: segments[segments.length - 2]!,
    id: segments[segments.length - 1]!,
  };
}

/** Strips `projects/p/databases/d/documents/` from a full name of this database. */
export function relativeName(db: DatabaseId, fullName: string, what = 'Document name'): string {
  const root = documentsRoot(db);
  if (fullName === root) return '';
  if (!fullName.startsWith(`${root}/`)) {
    throw firestoreErrors.invalidArgument(`${what} "${fullName}" lacks "${root}/" prefix; it must name this database.`);
  }
  return fullName.slice(root.length + 1);
}

export function documentKeyFromName(db: DatabaseId, fullName: unknown, what = 'Document name'): DocumentKey {
  if (typeof fullName !== 'string') throw firestoreErrors.invalidArgument(`${what} is missing.`);
  return documentKey(relativeName(db, fullName, what));
}

export function fullName(db: DatabaseId, relative: string): string {
  return relative === '' ? documentsRoot(db) : `${documentsRoot(db)}/${relative}`;
}

// ---- field paths ----------------------------------------------------------------------------

const simpleSegment = /^[A-Za-z_][A-Za-z_0-9]*$/;

/** `a.b`, `` a.`x.y` `` (backquotes with `\` escapes) → segments. */
export function parseFieldPath(text: string): string[] {
  if (text === '') throw firestoreErrors.invalidArgument('Invalid property path "": a field path cannot be empty.');
  const segments: string[] = [];
  let i = 0;
  while (i <= text.length) {
    let segment = '';
    if (text[i] === '`') {
      i++;
      let closed = false;
      while (i < text.length) {
        const ch = text[i]!;
        if (ch === '\\') {
          if (i + 1 >= text.length) break;
          segment += text[i + 1];
          i += 2;
        } else if (ch === '`') {
          closed = true;
          i++;
          break;
        } else {
          segment += ch;
          i++;
        }
      }
      if (!closed || segment === '') throw invalidFieldPath(text);
    } else {
      const end = text.indexOf('.', i);
      segment = text.slice(i, end === -1 ? text.length : end);
      i = end === -1 ? text.length : end;
      if (segment === '' || segment.includes('`')) throw invalidFieldPath(text);
    }
    segments.push(segment);
    if (i >= text.length) break;
    if (text[i] !== '.') throw invalidFieldPath(text);
    i++;
    if (i >= text.length) throw invalidFieldPath(text);
  }
  for (const segment of segments) checkFieldName(segment, text);
  return segments;
}

function invalidFieldPath(text: string) {
  return firestoreErrors.invalidArgument(`Invalid property path "${text}".`);
}

export function checkFieldName(name: string, where = name): void {
  if (name === '') throw firestoreErrors.invalidArgument(`Invalid property path "${where}": a field name cannot be empty.`);
  if (/^__.*__$/.test(name)) throw firestoreErrors.invalidArgument(`Field name "${name}" is reserved (at "${where}").`);
  if (Buffer.byteLength(name) > maxIdBytes) throw firestoreErrors.invalidArgument('The property.name is longer than 1500 bytes.');
}

export function formatFieldPath(segments: readonly string[]): string {
  return segments.map((segment) => (simpleSegment.test(segment) ? segment : `\`${segment.replaceAll('\\', '\\\\').replaceAll('`', '\\`')}\``)).join('.');
}

/** `__name__` stands for the document's key in filters, orders and cursors. */
export const keyField = '__name__';
