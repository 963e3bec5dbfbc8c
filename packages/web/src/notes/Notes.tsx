import type { User } from 'firebase/auth';
import { addDoc, collection, deleteDoc, doc, onSnapshot, orderBy, query, serverTimestamp, type Firestore, type FirestoreError } from 'firebase/firestore';
import { useEffect, useState } from 'react';
import { Navigate, useLocation } from 'react-router';
import { useAuthState } from '../auth-context';
import { Field } from '../components/Field';
import { firestoreOf } from './firestore';

interface Note {
  id: string;
  text: string;
  /** Written here and not yet acknowledged by the server. */
  pending: boolean;
}

/** The signed-in user's notes, kept in sync live: changes made anywhere show up here at once. */
export function Notes() {
  const { auth, user } = useAuthState();
  const location = useLocation();
  if (user === undefined) return <p>Loading…</p>;
  if (user === null) return <Navigate to="/signin" replace state={{ from: location.pathname }} />;
  return <NotesOf user={user} db={firestoreOf(auth.app)} />;
}

function NotesOf({ user, db }: { user: User; db: Firestore }) {
  const notesRef = collection(db, 'users', user.uid, 'notes');
  const [notes, setNotes] = useState<Note[] | null>(null);
  const [fromCache, setFromCache] = useState(true);
  const [error, setError] = useState<FirestoreError | null>(null);
  const [text, setText] = useState('');

  useEffect(() => {
    const notesQuery = query(collection(db, 'users', user.uid, 'notes'), orderBy('createdAt', 'desc'));
    return onSnapshot(
      notesQuery,
      { includeMetadataChanges: true },
      (snapshot) => {
        setError(null);
        setFromCache(snapshot.metadata.fromCache);
        setNotes(snapshot.docs.map((note) => ({ id: note.id, text: String(note.get('text') ?? ''), pending: note.metadata.hasPendingWrites })));
      },
      setError,
    );
  }, [db, user.uid]);

  async function add(event: React.FormEvent) {
    event.preventDefault();
    const trimmed = text.trim();
    if (!trimmed) return;
    setText('');
    // The listener shows the note at once (pending), then confirmed once the server has it.
    await addDoc(notesRef, { text: trimmed, createdAt: serverTimestamp() }).catch(setError);
  }

  return (
    <section>
      <h1>Your notes</h1>
      <p className="hint">Kept in sync live: open this page in another window and watch changes arrive.</p>
      <form onSubmit={(event) => void add(event)} className="card">
        <Field label="New note" type="text" value={text} onChange={setText} />
        <button type="submit">Add note</button>
      </form>
      {error && (
        <p role="alert" className="alert">
          {describe(error)}
        </p>
      )}
      {notes === null ? (
        <p>Loading…</p>
      ) : (
        <ul className="notes" data-testid="notes" data-from-cache={String(fromCache)}>
          {notes.map((note) => (
            <li key={note.id} data-testid="note" data-pending={String(note.pending)}>
              <span>{note.text}</span>
              {note.pending && <small> (saving…)</small>}
              <button type="button" onClick={() => void deleteDoc(doc(notesRef, note.id)).catch(setError)} aria-label={`Delete ${note.text}`}>
                Delete
              </button>
            </li>
          ))}
          {notes.length === 0 && <li>No notes yet.</li>}
        </ul>
      )}
    </section>
  );
}

function describe(error: FirestoreError): string {
  if (error.code === 'permission-denied') return 'This server does not let you keep notes yet (the database is closed until security rules are set up).';
  if (error.code === 'unavailable') return 'The server cannot be reached; your notes will sync when it is back.';
  return `Something went wrong: ${error.message}`;
}
