import type { User } from 'firebase/auth';
import { useCallback, useEffect, useState } from 'react';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useStatus, useTask } from '../components/useAction';
import { addPasskey, listPasskeys, passkeysSupported, removePasskey, type PasskeyInfo } from '../passkeys';

/** The account's passkeys: add one on this device under a name, remove any. */
export function Passkeys({ user }: { user: User }) {
  const { auth } = useAuthState();
  const { busy, error, run } = useTask();
  const [done, setDone] = useStatus();
  const [passkeys, setPasskeys] = useState<PasskeyInfo[] | null>(null);
  const [name, setName] = useState('');
  const reload = useCallback(() => listPasskeys(auth, user).then(setPasskeys), [auth, user]);
  useEffect(() => {
    void reload().catch(() => setPasskeys([]));
  }, [reload]);

  const onAdd = () =>
    run(async () => {
      setDone(null);
      const label = name.trim() || 'Passkey';
      await addPasskey(auth, user, label);
      setName('');
      await reload();
      setDone(`The passkey “${label}” was added. You can sign in with it without your password.`);
    });
  const onRemove = (passkey: PasskeyInfo) =>
    run(async () => {
      setDone(null);
      await removePasskey(auth, user, passkey.credentialId);
      await reload();
      setDone(`The passkey “${passkey.name ?? 'Passkey'}” was removed.`);
    });

  return (
    <section className="card" aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">Passkeys</h2>
      {passkeys === null ? (
        <p className="muted">Loading…</p>
      ) : passkeys.length === 0 ? (
        <p>No passkeys yet.</p>
      ) : (
        <ul className="methods">
          {passkeys.map((p) => (
            <li key={p.credentialId} data-testid="passkey">
              <span>
                {p.name ?? 'Passkey'}
                {p.createdAt ? <span className="muted"> · added {new Date(p.createdAt).toLocaleDateString()}</span> : null}
              </span>
              <button type="button" className="secondary" aria-label={`Remove passkey ${p.name ?? 'Passkey'}`} disabled={busy} onClick={() => void onRemove(p)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {passkeysSupported() ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void onAdd();
          }}
        >
          <Field label="Passkey name" value={name} onChange={setName} placeholder="e.g. My laptop" maxLength={256} />
          <button type="submit" disabled={busy}>
            Add a passkey
          </button>
        </form>
      ) : (
        <p className="muted">This browser cannot make passkeys.</p>
      )}
      <ErrorAlert error={error} />
      <StatusMessage>{done}</StatusMessage>
    </section>
  );
}
