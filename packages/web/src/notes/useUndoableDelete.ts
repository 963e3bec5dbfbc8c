import { deleteDoc, doc, serverTimestamp, setDoc, Timestamp, type CollectionReference, type FirestoreError } from 'firebase/firestore';
import { useEffect, useRef, useState } from 'react';
import { undoWindowMs } from './limits';
import type { Note } from './useNotes';

/**
 * Deletion with undo, told truthfully: a deleted note is deleted on the server at once (a reload or
 * a closed tab cannot bring it back), and Undo, within the window, writes it again under the same
 * id with its text and creation time (the rules take a restored note's earlier createdAt when its
 * updatedAt is the server's time). Its attached files are deleted only once the window is over;
 * when the page closes first, the orphan sweep of NoteAttachments.tsx removes them later.
 */
export function useUndoableDelete(notesRef: CollectionReference, onError: (error: FirestoreError) => void, afterWindow: (id: string) => void) {
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  /** The note last deleted, and whether the server has confirmed it (only then does the page say so). */
  const [last, setLast] = useState<{ note: Note; confirmed: boolean } | null>(null);
  const settled = useRef(afterWindow);
  settled.current = afterWindow;
  useEffect(
    () => () => {
      for (const [id, timer] of timers.current) {
        clearTimeout(timer);
        settled.current(id);
      }
      timers.current.clear();
    },
    [],
  );
  const forget = (id: string) => {
    clearTimeout(timers.current.get(id));
    timers.current.delete(id);
    setLast((current) => (current?.note.id === id ? null : current));
  };
  return {
    last,
    remove(note: Note) {
      if (timers.current.has(note.id)) return;
      setLast({ note, confirmed: false });
      deleteDoc(doc(notesRef, note.id)).then(
        () => setLast((current) => (current?.note.id === note.id ? { note, confirmed: true } : current)),
        onError,
      );
      timers.current.set(
        note.id,
        setTimeout(() => {
          forget(note.id);
          settled.current(note.id);
        }, undoWindowMs),
      );
    },
    undo(note: Note) {
      forget(note.id);
      // A note the server never confirmed has no creation time of the server's: it is written anew.
      const restored = note.createdAt && !note.pending ? { text: note.text, createdAt: Timestamp.fromDate(note.createdAt), updatedAt: serverTimestamp() } : { text: note.text, createdAt: serverTimestamp() };
      setDoc(doc(notesRef, note.id), restored).catch(onError);
    },
  };
}
