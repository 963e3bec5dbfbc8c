import type { FirebaseApp } from 'firebase/app';
import { deleteObject, getBlob, ref, uploadBytesResumable } from 'firebase/storage';
import { useCallback, useEffect, useRef, useState, type ChangeEvent, type ReactNode } from 'react';
import { ErrorAlert } from '../components/ErrorAlert';
import { useTask } from '../components/useAction';
import { attachmentName, attachmentsFolder, deleteNoteAttachments, forgetAttachmentFolders, listAttachments, maxAttachmentBytes, notesWithAttachments, sweepOrphanAttachments, type Attachment } from './attachments';
import { readableSize, storageErrorMessages } from './storage-errors';
import { storageOf } from './storage';
import './files.css';

interface NoteAttachmentsProps {
  app: FirebaseApp;
  uid: string;
  noteId: string;
  /** The note's text, to name its controls for assistive technology. */
  label: string;
}

/**
 * A note's attached files, kept in Cloud Storage beside the note (users/{uid}/notes/{noteId}/...):
 * listed, attached (the storage rules take a file only for a note that exists), downloaded through
 * the rules (no shareable link is made), and removed.
 */
export function NoteAttachments({ app, uid, noteId, label }: NoteAttachmentsProps) {
  const storage = storageOf(app);
  const [files, setFiles] = useState<Attachment[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const { busy, error, run } = useTask();

  const load = useCallback(
    async (known: boolean) => {
      const folder = attachmentsFolder(storage, uid, noteId);
      if (!known && !(await notesWithAttachments(storage, uid)).has(noteId)) return [];
      return listAttachments(folder);
    },
    [storage, uid, noteId],
  );
  useEffect(() => {
    let current = true;
    load(false).then(
      (listed) => current && setFiles(listed),
      (caught: unknown) => current && setLoadError(caught),
    );
    return () => {
      current = false;
    };
  }, [load]);

  const attach = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.currentTarget.files?.[0];
    event.currentTarget.value = '';
    if (!file) return;
    setProblem(null);
    if (file.size > maxAttachmentBytes) return setProblem(`${file.name} is ${readableSize(file.size)}; an attachment may be at most ${readableSize(maxAttachmentBytes)}.`);
    void run(async () => {
      const task = uploadBytesResumable(ref(attachmentsFolder(storage, uid, noteId), attachmentName(file.name)), file, { contentType: file.type || 'application/octet-stream' });
      task.on('state_changed', (snapshot) => setProgress(snapshot.totalBytes ? Math.round((snapshot.bytesTransferred / snapshot.totalBytes) * 100) : 0));
      try {
        await task;
      } finally {
        setProgress(null);
      }
      forgetAttachmentFolders(uid);
      setFiles(await load(true));
    });
  };

  const download = (file: Attachment) =>
    void run(async () => {
      const blob = await getBlob(file.ref);
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = file.name;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    });

  const remove = (file: Attachment) =>
    void run(async () => {
      await deleteObject(file.ref);
      forgetAttachmentFolders(uid);
      setFiles((current) => current?.filter((entry) => entry.ref.fullPath !== file.ref.fullPath) ?? null);
    });

  return (
    <div className="note-attachments" data-testid="note-attachments">
      {files !== null && files.length > 0 && (
        <ul className="attachments" aria-label={`Attachments of ${label}`}>
          {files.map((file) => (
            <li key={file.ref.fullPath} data-testid="attachment">
              <span>
                <span data-testid="attachment-name">{file.name}</span> <small className="muted">{readableSize(file.size)}</small>
              </span>
              <span className="note-actions">
                <button type="button" className="secondary" disabled={busy} onClick={() => download(file)} aria-label={`Download ${file.name}`}>
                  Download
                </button>
                <button type="button" className="secondary" disabled={busy} onClick={() => remove(file)} aria-label={`Remove ${file.name}`}>
                  Remove
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <div className="attachment-bar">
        <label className="file-button secondary small" aria-disabled={busy}>
          Attach a file
          <input type="file" className="visually-hidden" disabled={busy} onChange={attach} aria-label={`Attach a file to ${label}`} />
        </label>
        {progress !== null && (
          <span role="status" className="status">
            Uploading… {progress}%
          </span>
        )}
        {problem && (
          <span role="alert" className="alert">
            {problem}
          </span>
        )}
        <ErrorAlert error={error ?? loadError} overrides={storageErrorMessages} />
      </div>
    </div>
  );
}

/**
 * Deleting a note deletes its attachments too (when the note's own deletion is committed). Files
 * whose note is gone all the same (their deletion failed, the page closed first, the note was
 * deleted elsewhere) are swept once the notes are known from the server: only files older than an
 * hour, so that a note just made on another device, whose file arrived before its note reached
 * this page, is never taken for gone.
 */
export function useAttachmentCleanup(app: FirebaseApp, uid: string, liveNoteIds: readonly string[] | null): { cleanUp: (noteId: string) => void; alert: ReactNode } {
  const [error, setError] = useState<unknown>(null);
  const cleanUp = useCallback(
    (noteId: string) => {
      setError(null);
      deleteNoteAttachments(storageOf(app), uid, noteId).catch(setError);
    },
    [app, uid],
  );
  const known = liveNoteIds !== null;
  const live = useRef(liveNoteIds);
  live.current = liveNoteIds;
  useEffect(() => {
    if (!known) return;
    void sweepOrphanAttachments(storageOf(app), uid, () => live.current).catch(() => undefined);
  }, [app, uid, known]);
  return {
    cleanUp,
    alert: error ? <ErrorAlert error={error} overrides={{ ...storageErrorMessages, 'storage/unknown': 'The deleted note’s attached files could not be deleted just now; they will be the next time you open your notes.' }} /> : null,
  };
}
