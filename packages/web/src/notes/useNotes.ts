import { collection, doc, onSnapshot, orderBy, query, type Firestore, type FirestoreError, type Timestamp } from 'firebase/firestore';
import { useEffect, useState } from 'react';

export interface Note {
  id: string;
  text: string;
  /** The server's time of creation; until it is known, the local estimate. */
  createdAt: Date | null;
  updatedAt: Date | null;
  /** Written here and not yet acknowledged by the server. */
  pending: boolean;
}

export interface NotesState {
  /** null until the first snapshot (from the cache or the server) arrives. */
  notes: Note[] | null;
  /** The last snapshot came from this device's cache only: the server has not confirmed it. */
  fromCache: boolean;
  error: FirestoreError | null;
}

function dateOf(value: unknown): Date | null {
  return value && typeof (value as Timestamp).toDate === 'function' ? (value as Timestamp).toDate() : null;
}

/** The user's notes, newest first, live, with the metadata that tells saved from pending. */
export function useNotes(db: Firestore, uid: string): NotesState {
  const [state, setState] = useState<NotesState>({ notes: null, fromCache: true, error: null });
  useEffect(() => {
    const notesQuery = query(collection(db, 'users', uid, 'notes'), orderBy('createdAt', 'desc'));
    return onSnapshot(
      notesQuery,
      { includeMetadataChanges: true },
      (snapshot) =>
        setState({
          error: null,
          fromCache: snapshot.metadata.fromCache,
          notes: snapshot.docs.map((note) => ({
            id: note.id,
            text: String(note.get('text') ?? ''),
            // 'estimate': a note just written here shows the local time until the server's arrives.
            createdAt: dateOf(note.get('createdAt', { serverTimestamps: 'estimate' })),
            updatedAt: dateOf(note.get('updatedAt', { serverTimestamps: 'estimate' })),
            pending: note.metadata.hasPendingWrites,
          })),
        }),
      // The listener ends on an error (a rules refusal): what was shown stays, with the reason.
      (error) => setState((current) => ({ ...current, error })),
    );
  }, [db, uid]);
  return state;
}

/** Whether the browser believes it has a network connection, kept current. */
export function useOnline(): boolean {
  const [online, setOnline] = useState(() => navigator.onLine);
  useEffect(() => {
    const update = () => setOnline(navigator.onLine);
    window.addEventListener('online', update);
    window.addEventListener('offline', update);
    return () => {
      window.removeEventListener('online', update);
      window.removeEventListener('offline', update);
    };
  }, []);
  return online;
}

/**
 * The user's note count as the server's trigger keeps it (users/{uid}.noteCount, written by the
 * functions code base in packages/web/functions). null when nothing keeps it: no document or no
 * number (Hearth runs without those functions), or a refused read (older rules): then the page
 * shows nothing rather than an error about a number it can do without. Below zero (a delete
 * counted before its note's create, for a moment) is shown as nothing too.
 */
export function useNoteCount(db: Firestore, uid: string): number | null {
  const [count, setCount] = useState<number | null>(null);
  useEffect(
    () =>
      onSnapshot(
        doc(db, 'users', uid),
        (snapshot) => {
          const value: unknown = snapshot.get('noteCount');
          setCount(typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null);
        },
        () => setCount(null),
      ),
    [db, uid],
  );
  return count;
}
