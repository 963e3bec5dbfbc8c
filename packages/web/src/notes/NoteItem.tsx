import { useState, type ReactNode } from 'react';
import type { Note } from './useNotes';
import { tooLong } from './limits';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

interface NoteItemProps {
  note: Note;
  onSave: (text: string) => void;
  onDelete: () => void;
  /** Shown under the note while it is not being edited (its attachments). */
  children?: ReactNode;
}

/** One note: its text and times, edited in place (Enter or Save keeps, Escape or Cancel drops). */
export function NoteItem({ note, onSave, onDelete, children }: NoteItemProps) {
  const [draft, setDraft] = useState<string | null>(null);
  const save = () => {
    const text = draft?.trim() ?? '';
    if (tooLong(text)) return;
    if (text && text !== note.text) onSave(text);
    setDraft(null);
  };
  return (
    <li className="note" data-testid="note" data-pending={String(note.pending)}>
      {draft === null ? (
        <>
          <span className="note-text" data-testid="note-text">{note.text}</span>
          <div className="note-meta">
            <small className="muted">
              {note.createdAt ? <time dateTime={note.createdAt.toISOString()}>{dateTime.format(note.createdAt)}</time> : null}
              {note.updatedAt ? ' · edited' : null}
              {note.pending ? ' · saving…' : null}
            </small>
            <span className="note-actions">
              <button type="button" className="secondary" onClick={() => setDraft(note.text)} aria-label={`Edit ${note.text}`}>
                Edit
              </button>
              <button type="button" className="secondary" onClick={onDelete} aria-label={`Delete ${note.text}`}>
                Delete
              </button>
            </span>
          </div>
          {children}
        </>
      ) : (
        <form
          className="note-edit"
          onSubmit={(event) => {
            event.preventDefault();
            save();
          }}
        >
          <textarea
            aria-label="Note text"
            value={draft}
            autoFocus
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') setDraft(null);
              if (event.key === 'Enter' && !event.shiftKey) {
                event.preventDefault();
                save();
              }
            }}
          />
          {tooLong(draft) && (
            <span role="alert" className="alert">
              {tooLong(draft)}
            </span>
          )}
          <span className="note-actions">
            <button type="submit" disabled={!draft.trim() || tooLong(draft) !== null}>
              Save
            </button>
            <button type="button" className="secondary" onClick={() => setDraft(null)}>
              Cancel
            </button>
          </span>
        </form>
      )}
    </li>
  );
}
