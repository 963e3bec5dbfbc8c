import { firestoreErrors } from './errors.js';
import { hasNumericIdShape, isWellFormed, numericIdValue } from './values.js';

/**
 * The ids inside document names and reference values, checked with Google's messages (taken from
 * its emulator): `__x__` ids are reserved, except numeric document ids (`__id7__`, `__id-2__`:
 * Datastore's integer ids, which sort before every other id); a collection id is never numeric.
 */
export function checkReservedId(segment: string, isDocumentId: boolean): void {
  if (segment.length < 4 || !segment.startsWith('__') || !segment.endsWith('__')) return;
  if (!isDocumentId) throw firestoreErrors.invalidArgument(`Collection id "${segment}" is invalid because it is reserved.`);
  if (numericIdValue(segment) !== undefined) return;
  const why = hasNumericIdShape(segment) ? 'it is not a 64 bit integer' : 'it is reserved';
  throw firestoreErrors.invalidArgument(`Resource id "${segment}" is invalid because ${why}.`);
}

const maxIdBytes = 1500;

/**
 * A reference value must name a document: `projects/{p}/databases/{d}/documents/{c}/{id}…`, of
 * any project or database (Google stores references to other databases as they are). Refused
 * with the messages Google gives, which point at the offending index.
 */
export function checkReferenceName(name: string): void {
  const fail = (problem: string) => firestoreErrors.invalidArgument(`Resource name "${name}" ${problem}`);
  if (!name.startsWith('projects')) throw fail('lacks "projects" at index 0.');
  if (name.endsWith('/')) {
    throw fail(/^projects\/[^/]+\/databases\/[^/]+\/documents\/$/.test(name) ? 'is invalid: Omit trailing "/".' : 'has invalid trailing "/".');
  }
  const tokens = name.split('/');
  const offsets: number[] = [];
  for (let i = 0, at = 0; i < tokens.length; at += tokens[i]!.length + 1, i++) offsets.push(at);
  const literal = (i: number, word: string) => {
    const token = tokens[i];
    if (token === undefined) throw fail(`lacks "/" at index ${name.length}.`);
    if (token === word) return;
    throw fail(token.startsWith(word) ? `lacks "/" at index ${offsets[i]! + word.length}.` : `lacks "${word}" at index ${offsets[i]}.`);
  };
  const id = (i: number, what: string) => {
    if (tokens[i] === undefined) throw fail(`lacks "/" at index ${name.length}.`);
    if (tokens[i] === '') throw fail(`lacks a ${what} at index ${offsets[i]}.`);
  };
  literal(0, 'projects');
  id(1, 'project id');
  literal(2, 'databases');
  id(3, 'database id');
  if (tokens.length === 4) throw firestoreErrors.invalidArgument('Non-document resource reference value not supported.');
  if (tokens[4] !== 'documents') throw firestoreErrors.invalidArgument(`Resource "${name}" is not recognized.`);
  if (tokens.length === 5) throw fail('is invalid: Omit "/documents" when referencing a database (except as the parent of a document).');
  for (let i = 5; i < tokens.length; i++) {
    const segment = tokens[i]!;
    if (segment === '') throw fail(`lacks a resource id at index ${offsets[i]}.`);
    if (segment === '.' || segment === '..') throw fail(`contains a resource id "${segment}" at index ${offsets[i]}.`);
    if (Buffer.byteLength(segment) > maxIdBytes) throw firestoreErrors.invalidArgument('The key path element name is longer than 1500 bytes.');
    if (!isWellFormed(segment)) throw fail(`is not valid UTF-8 at index ${offsets[i]}.`);
    checkReservedId(segment, (i - 5) % 2 === 1);
  }
  if ((tokens.length - 5) % 2 !== 0) throw fail(`lacks "/" at index ${name.length}.`);
}
