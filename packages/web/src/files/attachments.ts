import { deleteObject, getMetadata, listAll, ref, type FirebaseStorage, type StorageReference } from 'firebase/storage';

/** What packages/web/storage.rules lets an attachment be. */
export const maxAttachmentBytes = 10 * 1024 * 1024;

export interface Attachment {
  ref: StorageReference;
  /** The file's name as the user chose it (the last segment of its path). */
  name: string;
  size: number;
  contentType: string;
}

/** A note's attachments live in users/{uid}/notes/{noteId}/, readable and writable by that user only. */
export function attachmentsFolder(storage: FirebaseStorage, uid: string, noteId: string): StorageReference {
  return ref(storage, `users/${uid}/notes/${noteId}`);
}

/**
 * A file name that is one path segment: no slashes or control characters, at most 200 characters
 * (object names are at most 1024 bytes, and the folder takes some).
 */
export function attachmentName(fileName: string): string {
  const cleaned = fileName
    .replace(/[\u0000-\u001f\u007f/\\]+/g, '_')
    .replace(/^\.+$/, '_')
    .trim()
    .slice(0, 200);
  return cleaned || 'file';
}

// One listing of users/{uid}/notes/ tells which notes have attachments at all, so that a page of
// notes costs one request plus one per note with files, not one per note.
const folderLists = new Map<string, Promise<ReadonlySet<string>>>();

/** The ids of the user's notes that have attachments (listed once per page load, until forgotten). */
export function notesWithAttachments(storage: FirebaseStorage, uid: string): Promise<ReadonlySet<string>> {
  let listed = folderLists.get(uid);
  if (!listed) {
    listed = listAll(ref(storage, `users/${uid}/notes`)).then((found) => new Set(found.prefixes.map((prefix) => prefix.name)));
    listed.catch(() => folderLists.delete(uid));
    folderLists.set(uid, listed);
  }
  return listed;
}

/** After an upload or a deletion the listing is out of date. */
export function forgetAttachmentFolders(uid: string): void {
  folderLists.delete(uid);
}

/** A note's attachments, by name. */
export async function listAttachments(folder: StorageReference): Promise<Attachment[]> {
  const found = await listAll(folder);
  const files = await Promise.all(found.items.map(async (item) => ({ item, metadata: await getMetadata(item) })));
  return files
    .map(({ item, metadata }) => ({ ref: item, name: item.name, size: metadata.size, contentType: metadata.contentType ?? 'application/octet-stream' }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Deletes every attachment of a note (when the note itself is deleted). */
export async function deleteNoteAttachments(storage: FirebaseStorage, uid: string, noteId: string): Promise<void> {
  const found = await listAll(attachmentsFolder(storage, uid, noteId));
  await Promise.all(
    found.items.map((item) =>
      deleteObject(item).catch((error: unknown) => {
        if ((error as { code?: string }).code !== 'storage/object-not-found') throw error;
      }),
    ),
  );
  forgetAttachmentFolders(uid);
}

/** Files younger than this are never swept: their note may be on its way to this page. */
const orphanAgeMs = 3600_000;

/**
 * Deletes the attachments of notes that no longer exist (`liveNoteIds` is read after the listing
 * arrives, so a note that appeared meanwhile counts), when they are older than an hour. Once per page load.
 */
export async function sweepOrphanAttachments(storage: FirebaseStorage, uid: string, liveNoteIds: () => readonly string[] | null): Promise<void> {
  if (swept.has(uid)) return;
  swept.add(uid);
  const folders = await notesWithAttachments(storage, uid);
  const live = new Set(liveNoteIds() ?? folders);
  const orphans = [...folders].filter((noteId) => !live.has(noteId));
  for (const noteId of orphans) {
    const found = await listAll(attachmentsFolder(storage, uid, noteId));
    for (const item of found.items) {
      const metadata = await getMetadata(item);
      if (Date.now() - Date.parse(metadata.timeCreated) > orphanAgeMs) await deleteObject(item);
    }
  }
  if (orphans.length) forgetAttachmentFolders(uid);
}
const swept = new Set<string>();
