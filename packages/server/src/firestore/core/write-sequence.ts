import { firestoreErrors } from './errors.js';
import type { Write } from './writes.js';

/**
 * Several writes to one document in one commit, as Google's backend takes them (measured on its
 * emulator, every ordering of two and many of three writes; tests/firestore-differential-gaps):
 * the writes of a document are collapsed into one mutation, an insert (exists: false), an update
 * (exists: true or an update time), an upsert (no precondition) or a delete. Some sequences
 * cannot be collapsed and refuse the whole commit before anything is read:
 * - an insert after anything but a delete ("Cannot upsert then insert an entity…"),
 * - an update, or a delete that needs the document, after a delete,
 * - a delete that needs the document absent after anything but a delete,
 * - an update time other than the first write's (only the first write's precondition is
 *   checked against the stored document), and a verify beside any other write.
 * Otherwise the writes apply in order, which the collapsed mutation equals.
 */

type Mutation = 'insert' | 'update' | 'upsert' | 'delete';

interface Collapsed {
  mutation: Mutation | 'verify';
  /** The first write's update-time precondition: the only version the stored document must have. */
  version: number | undefined;
}

/**
 * Refuses what Google refuses, and returns the writes to apply in order: a later write's update
 * time (necessarily the first write's) is dropped, since it holds for the stored document, not
 * for what the earlier writes of the same commit made of it.
 */
export function checkWriteSequence(writes: readonly Write[]): readonly Write[] {
  if (writes.length < 2) return writes;
  const documents = new Map<string, Collapsed>();
  let adjusted: Write[] | undefined;
  writes.forEach((write, index) => {
    const path = write.key.path;
    const version = write.precondition && 'updateTime' in write.precondition ? write.precondition.updateTime : undefined;
    const previous = documents.get(path);
    if (!previous) {
      documents.set(path, { mutation: write.kind === 'verify' ? 'verify' : mutationOf(write), version });
      return;
    }
    if (previous.mutation === 'verify') {
      throw invalid(write.kind === 'verify' ? 'the same document cannot be verified more than once in a single request' : 'the same document cannot be verified and then written in a single request');
    }
    if (write.kind === 'verify') throw invalid('the same document cannot be written and then verified in a single request');
    previous.mutation = collapse(previous.mutation, write);
    if (version !== undefined) {
      if (version !== previous.version) {
        throw invalid(`Cannot collapse mutations with different version preconditions (${describeVersion(previous.version)} and ${describeVersion(version)})`);
      }
      adjusted ??= [...writes];
      const { precondition: _sameAsFirst, ...unconditional } = write;
      adjusted[index] = unconditional;
    }
  });
  return adjusted ?? writes;
}

function mutationOf(write: Write): Mutation {
  if (write.kind === 'delete') return 'delete';
  const precondition = write.precondition;
  if (!precondition) return 'upsert';
  return 'exists' in precondition && !precondition.exists ? 'insert' : 'update';
}

/** The mutation two in a row amount to, or Google's refusal. */
function collapse(previous: Mutation, write: Write): Mutation {
  const precondition = write.precondition;
  if (write.kind === 'delete') {
    const mustExist = precondition !== undefined && 'exists' in precondition && precondition.exists;
    const mustBeAbsent = precondition !== undefined && 'exists' in precondition && !precondition.exists;
    if (previous === 'delete' && mustExist) throw invalid('Cannot delete then delete an entity in the same request.');
    if (previous !== 'delete' && mustBeAbsent) throw invalid(`Cannot ${previous} then delete an entity in the same request.`);
    return 'delete';
  }
  const next = mutationOf(write);
  if (next === 'insert') {
    if (previous !== 'delete') throw invalid(`Cannot ${previous} then insert an entity in the same request.`);
    return 'upsert';
  }
  if (previous === 'delete') {
    if (next === 'update') throw invalid('Cannot delete then update an entity in the same request.');
    return 'upsert';
  }
  return previous;
}

/** As Google's message spells a version precondition. */
function describeVersion(version: number | undefined): string {
  return version === undefined ? 'null' : `VersionPrecondition{exactBaseVersion=${version}, maxBaseVersion=null}`;
}

function invalid(message: string) {
  return firestoreErrors.invalidArgument(message);
}
