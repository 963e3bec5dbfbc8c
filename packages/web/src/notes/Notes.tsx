import type { User } from 'firebase/auth';
import { addDoc, collection, doc, serverTimestamp, updateDoc, type Firestore, type FirestoreError } from 'firebase/firestore';
import { useState } from 'react';
import { Navigate, useLocation } from 'react-router';
import { useAuthState } from '../auth-context';
import { Field } from '../components/Field';
import { NoteAttachments, useAttachmentCleanup } from '../files/NoteAttachments';
import { firestoreOf } from './firestore';
import { tooLong } from './limits';
import { NoteItem } from './NoteItem';
import { useNoteCount, useNotes, useOnline } from './useNotes';
import { useUndoableDelete } from './useUndoableDelete';

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
  const { notes, fromCache, error: listenError } = useNotes(db, user.uid);
  const online = useOnline();
  const noteCount = useNoteCount(db, user.uid);
  const [writeError, setWriteError] = useState<FirestoreError | null>(null);
  const [text, setText] = useState('');
  const attachments = useAttachmentCleanup(db.app, user.uid, notes && !fromCache ? notes.map((note) => note.id) : null);
  const deletions = useUndoableDelete(notesRef, setWriteError, (id) => attachments.cleanUp(id));
  const error = writeError ?? listenError;

  function add(event: React.FormEvent) {
    event.preventDefault();
    const trimmed = text.trim();
    if (!trimmed || tooLong(trimmed)) return;
    setText('');
    setWriteError(null);
    // Not awaited: offline, the write waits in the SDK's queue; the listener shows it at once as pending.
    addDoc(notesRef, { text: trimmed, createdAt: serverTimestamp() }).catch(setWriteError);
  }
  function save(id: string, newText: string) {
    setWriteError(null);
    updateDoc(doc(notesRef, id), { text: newText, updatedAt: serverTimestamp() }).catch(setWriteError);
  }

  const shown = notes;
  const pendingCount = shown?.filter((note) => note.pending).length ?? 0;
  return (
    <section className="notes-page">
      <h1>Your notes</h1>
      <p className="hint">Kept in sync live: open this page in another window and watch changes arrive.</p>
      {noteCount !== null && (
        // The server's count (a trigger keeps it): it follows the list shortly after each change.
        <p className="hint" data-testid="note-count">
          {noteCount === 1 ? '1 note' : `${noteCount.toLocaleString('en-US')} notes`} saved on the server.
        </p>
      )}
      <Connection online={online} fromCache={fromCache} loaded={notes !== null} pendingCount={pendingCount} />
      <form onSubmit={add} className="card">
        <Field label="New note" type="text" value={text} onChange={setText} aria-describedby={tooLong(text) ? 'new-note-too-long' : undefined} />
        {tooLong(text) && (
          <p id="new-note-too-long" role="alert" className="alert" data-testid="note-too-long">
            {tooLong(text)}
          </p>
        )}
        <button type="submit" disabled={!text.trim() || tooLong(text) !== null}>
          Add note
        </button>
      </form>
      {error && (
        <p role="alert" className="alert">
          {describe(error)}
        </p>
      )}
      {attachments.alert}
      {deletions.last && (
        <p role="status" className="status undo">
          {deletions.last.confirmed ? 'Note deleted.' : 'Deleting the note…'}{' '}
          <button type="button" className="link" onClick={() => deletions.undo(deletions.last!.note)}>
            Undo
          </button>
        </p>
      )}
      {shown === null ? (
        // A refused listener never sends a first snapshot: the error above says why instead.
        error ? null : <p className="loading">Loading your notes…</p>
      ) : shown.length === 0 ? (
        <p className="empty" data-testid="notes-empty">
          No notes yet. Write your first one above.
        </p>
      ) : (
        <ul className="notes" data-testid="notes" data-from-cache={String(fromCache)}>
          {shown.map((note) => (
            <NoteItem key={note.id} note={note} onSave={(next) => save(note.id, next)} onDelete={() => deletions.remove(note)}>
              {!note.pending && <NoteAttachments app={db.app} uid={user.uid} noteId={note.id} label={note.text} />}
            </NoteItem>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Says when the page works from this device's copy, and what that means for changes. */
function Connection({ online, fromCache, loaded, pendingCount }: { online: boolean; fromCache: boolean; loaded: boolean; pendingCount: number }) {
  const waiting = pendingCount === 1 ? '1 change is' : `${pendingCount} changes are`;
  if (!online) {
    return (
      <p className="offline" role="status" data-testid="offline">
        You are offline. You can keep writing: {pendingCount > 0 ? `${waiting} saved on this device and will` : 'changes are saved on this device and'} sync when you are back online.
      </p>
    );
  }
  if (loaded && fromCache) {
    return (
      <p className="offline" role="status" data-testid="offline">
        Connecting to the server… showing the notes saved on this device.
      </p>
    );
  }
  return null;
}

function describe(error: FirestoreError): string {
  if (error.code === 'permission-denied') {
    return 'This site does not let you keep notes here: its security rules refuse it. If you just signed in, reload the page; if it persists, ask the site’s administrator.';
  }
  if (error.code === 'unavailable') return 'The server cannot be reached; your notes will sync when it is back.';
  if (error.code === 'invalid-argument' || error.code === 'failed-precondition') return `That note could not be saved: ${error.message}`;
  return `Something went wrong: ${error.message}. Reload the page to try again.`;
}
