import { deleteUser, type User } from 'firebase/auth';
import { useState } from 'react';
import { ErrorAlert } from '../components/ErrorAlert';
import { useRecentSignInTask, useResumeOnce } from './recent-sign-in-task';
import type { ResumableAction } from './recent-sign-in';

/**
 * Deletes the account once the box is ticked. When the sign-in is too old for the server, the
 * user confirms it is them by the account's own method (ConfirmIdentity), and the deletion then
 * goes ahead; a confirmation by email link or provider redirect comes back here with `resume`
 * and finishes it.
 */
export function DeleteAccount({ user, onDeleting, resume }: { user: User; onDeleting: (deleting: boolean) => void; resume: ResumableAction | null }) {
  const [confirmed, setConfirmed] = useState(resume?.kind === 'delete');
  const { busy, error, run, panel } = useRecentSignInTask(user);
  const remove = () =>
    run({ kind: 'delete' }, async () => {
      onDeleting(true);
      try {
        // On success the user signs out, and Account's guard sends us home.
        await deleteUser(user);
      } catch (caught: unknown) {
        onDeleting(false);
        throw caught;
      }
    });
  useResumeOnce(resume, 'delete', () => void remove());
  return (
    <section className="card danger" aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete account</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void remove();
        }}
      >
        <p>This removes your account for good. It cannot be undone.</p>
        <label className="choice">
          <input type="checkbox" checked={confirmed} onChange={(event) => setConfirmed(event.target.checked)} />I understand my account will be deleted
        </label>
        <ErrorAlert error={error} />
        <button type="submit" className="danger" disabled={busy || !confirmed || panel !== null}>
          Delete account
        </button>
      </form>
      {panel}
    </section>
  );
}
