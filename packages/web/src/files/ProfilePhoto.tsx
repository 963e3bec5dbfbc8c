import type { FirebaseApp } from 'firebase/app';
import { updateProfile, type User } from 'firebase/auth';
import { deleteObject, getDownloadURL, ref, uploadBytesResumable, type StorageReference } from 'firebase/storage';
import { useState, type ChangeEvent } from 'react';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { useStatus, useTask } from '../components/useAction';
import { readableSize, storageErrorMessages } from './storage-errors';
import { pageUrl, storageOf } from './storage';
import './files.css';

/** What packages/web/storage.rules lets a profile photo be. */
const photoTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
const maxPhotoBytes = 5 * 1024 * 1024;

/** Where the user's photo lives: users/{uid}/photo, readable and writable by that user only. */
function photoRef(user: User, app: FirebaseApp): StorageReference {
  return ref(storageOf(app), `users/${user.uid}/photo`);
}

/** Whether the account's photo is the one kept here (not, say, a picture from a sign-in provider). */
function isOwnPhoto(user: User): boolean {
  return user.photoURL?.includes(`/o/${encodeURIComponent(`users/${user.uid}/photo`)}?`) ?? false;
}

/**
 * The account's profile photo: uploaded to Cloud Storage, its download URL kept as the account's
 * photoURL (so it travels in the ID token's `picture` claim), replaced by a new upload (a new URL,
 * so no cache shows the old one), removed with its file.
 */
export function ProfilePhoto({ user }: { user: User }) {
  const { auth, refresh } = useAuthState();
  const [done, setDone] = useStatus();
  const [progress, setProgress] = useState<number | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const { busy, error, run } = useTask();

  const choose = (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.currentTarget.files?.[0];
    event.currentTarget.value = '';
    if (!file) return;
    setProblem(null);
    if (!photoTypes.includes(file.type)) return setProblem('Choose a PNG, JPEG, GIF or WebP image.');
    if (file.size > maxPhotoBytes) return setProblem(`That image is ${readableSize(file.size)}; a photo may be at most ${readableSize(maxPhotoBytes)}.`);
    const replacing = Boolean(user.photoURL);
    void run(async () => {
      setDone(null);
      const target = photoRef(user, auth.app);
      const task = uploadBytesResumable(target, file, { contentType: file.type, cacheControl: 'private, max-age=86400' });
      task.on('state_changed', (snapshot) => setProgress(snapshot.totalBytes ? Math.round((snapshot.bytesTransferred / snapshot.totalBytes) * 100) : 0));
      try {
        await task;
      } finally {
        setProgress(null);
      }
      await updateProfile(user, { photoURL: pageUrl(await getDownloadURL(target)) });
      refresh();
      setDone(replacing ? 'Your photo was replaced.' : 'Your photo was saved.');
    });
  };

  const remove = () =>
    void run(async () => {
      setDone(null);
      setProblem(null);
      if (isOwnPhoto(user)) {
        await deleteObject(photoRef(user, auth.app)).catch((caught: unknown) => {
          // Already gone (removed from another device): the account's link to it goes below all the same.
          if ((caught as { code?: string }).code !== 'storage/object-not-found') throw caught;
        });
      }
      await updateProfile(user, { photoURL: null });
      refresh();
      setDone('Your photo was removed.');
    });

  return (
    <section className="card" aria-labelledby="photo-heading">
      <h2 id="photo-heading">Profile photo</h2>
      <div className="photo-row">
        {user.photoURL ? (
          <img className="avatar" src={user.photoURL} alt="Your profile photo" data-testid="profile-photo" />
        ) : (
          <span className="avatar avatar-empty" data-testid="profile-photo-none" aria-hidden="true">
            {(user.displayName || user.email || '?').slice(0, 1).toUpperCase()}
          </span>
        )}
        <div className="photo-actions">
          <label className="file-button" aria-disabled={busy}>
            {user.photoURL ? 'Replace photo' : 'Add a photo'}
            <input type="file" className="visually-hidden" accept={photoTypes.join(',')} disabled={busy} onChange={choose} aria-label={user.photoURL ? 'Replace photo' : 'Add a photo'} />
          </label>
          {user.photoURL && (
            <button type="button" className="secondary" disabled={busy} onClick={remove}>
              Remove photo
            </button>
          )}
        </div>
      </div>
      {progress !== null && (
        <p role="status" className="status">
          Uploading… {progress}%
        </p>
      )}
      {problem && (
        <p role="alert" className="alert">
          {problem}
        </p>
      )}
      <ErrorAlert error={error} overrides={storageErrorMessages} />
      <StatusMessage>{done}</StatusMessage>
      <p className="muted">PNG, JPEG, GIF or WebP, up to 5 MB.</p>
    </section>
  );
}
