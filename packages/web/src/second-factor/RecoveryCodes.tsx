import type { User } from 'firebase/auth';
import { useEffect, useState } from 'react';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { useStatus } from '../components/useAction';
import { useRecentSignInTask, useResumeOnce } from '../pages/recent-sign-in-task';
import type { ResumableAction } from '../pages/resume-store';
import { generateRecoveryCodes, recoveryCodesStatus, type RecoveryCodesStatus } from './recovery-codes';

/**
 * Account settings, inside two-step verification: how many recovery codes are left, and making a
 * new set (shown once, with copy and download; the old set stops working). Making codes is as
 * sensitive as adding a factor, so a stale sign-in is confirmed first (ConfirmIdentity, inline);
 * a confirmation that reloads the page (a link, a redirect, a passkey) comes back with `resume`.
 */
export function RecoveryCodes({ user, factorCount, resume = null }: { user: User; factorCount: number; resume?: ResumableAction | null }) {
  const { auth } = useAuthState();
  const [status, setStatus] = useState<RecoveryCodesStatus | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [done, setDone] = useStatus();
  const { busy, error, run, panel } = useRecentSignInTask(user);
  useEffect(() => {
    let current = true;
    recoveryCodesStatus(auth, user).then(
      (answer) => current && setStatus(answer),
      () => current && setStatus(null),
    );
    return () => {
      current = false;
    };
  }, [auth, user, factorCount, codes]);

  const onGenerate = () =>
    void run({ kind: 'recovery-codes' }, async () => {
      setDone(null);
      setCodes(await generateRecoveryCodes(auth, user));
    });
  useResumeOnce(resume, 'recovery-codes', () => onGenerate());
  const text = codes ? `Recovery codes for ${user.email ?? user.uid} at ${window.location.host}\nEach code works once.\n\n${codes.join('\n')}\n` : '';
  const onCopy = () =>
    void navigator.clipboard.writeText(text).then(
      () => setDone('The codes were copied. Paste them somewhere safe.'),
      () => setDone('The browser did not allow copying; download them or write them down.'),
    );
  const onDownload = () => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = 'recovery-codes.txt';
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  };
  const remaining = status?.remainingCount ?? 0;
  return (
    <div className="recovery" data-testid="recovery-codes">
      <h3>Recovery codes</h3>
      {codes ? (
        <>
          <p>
            <strong>Save these codes now: they are shown only this once.</strong> If you lose your phone or authenticator app, each
            code lets you sign in once instead of the second step.
          </p>
          <ol className="recovery-code-list" data-testid="recovery-code-list">
            {codes.map((code) => (
              <li key={code}>
                <code>{code}</code>
              </li>
            ))}
          </ol>
          <p className="choices">
            <button type="button" className="secondary" onClick={onCopy}>
              Copy
            </button>
            <button type="button" className="secondary" onClick={onDownload}>
              Download
            </button>
            <button type="button" onClick={() => setCodes(null)}>
              I saved them
            </button>
          </p>
        </>
      ) : (
        <>
          <p data-testid="recovery-codes-left">
            {status === null
              ? 'Checking…'
              : status.generateTime === undefined
                ? 'None yet. Make a set of one-time codes to sign in with if you lose your phone or authenticator app.'
                : remaining === 0
                  ? 'All your recovery codes are used. Make new ones.'
                  : `${remaining} of 10 left${remaining <= 3 ? ': make new ones soon.' : '.'}`}
          </p>
          <p>
            <button type="button" className="secondary" disabled={busy || panel !== null} onClick={onGenerate}>
              {status?.generateTime === undefined ? 'Make recovery codes' : 'Make new codes'}
            </button>
            {status?.generateTime !== undefined && <span className="muted"> The old codes then stop working.</span>}
          </p>
        </>
      )}
      <ErrorAlert error={error} />
      <StatusMessage>{done}</StatusMessage>
      {panel}
    </div>
  );
}
