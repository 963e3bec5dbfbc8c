import { noTextMessages, siteFeatures } from '../site-features';
import {
  multiFactor,
  PhoneAuthProvider,
  PhoneMultiFactorGenerator,
  TotpMultiFactorGenerator,
  type MultiFactorInfo,
  type TotpSecret,
  type User,
} from 'firebase/auth';
import { toDataURL } from 'qrcode';
import { useRef, useState } from 'react';
import { useAuthState } from '../auth-context';
import { ErrorAlert, StatusMessage } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction, useStatus, useTask } from '../components/useAction';
import { withHumanCheck } from './human-check';
import { factorLabel, totpCodeErrors } from './ResolveSecondFactor';
import { RecoveryCodes } from './RecoveryCodes';
import { useRecentSignInTask, useResumeOnce } from '../pages/recent-sign-in-task';
import type { ResumableAction } from '../pages/resume-store';

type Adding = null | 'totp' | 'phone';

/**
 * Account settings: the second factors on this account, removing one, and adding an
 * authenticator app (TOTP, with a QR code) or a phone number (codes by text message). Removing one
 * needs a recent sign-in that passed the second step (or a passkey's); otherwise "Confirm it's
 * you" opens (password then second step, or a passkey, which comes back here with `resume`).
 */
export function TwoStep({ user, resume = null }: { user: User; resume?: ResumableAction | null }) {
  const { refresh } = useAuthState();
  const [adding, setAdding] = useState<Adding>(null);
  const [done, setDone] = useStatus();
  const { busy, error, run, panel } = useRecentSignInTask(user);
  const factors = multiFactor(user).enrolledFactors;

  const onRemove = (info: MultiFactorInfo) => {
    const label = factorLabel(info);
    return run({ kind: 'remove-factor', mfaEnrollmentId: info.uid, label }, async () => {
      setDone(null);
      await multiFactor(user).unenroll(info);
      refresh();
      setDone(`${label} was removed. Other devices signed in to this account were signed out.`);
    });
  };
  useResumeOnce(resume, 'remove-factor', ({ mfaEnrollmentId }) => {
    const info = factors.find((f) => f.uid === mfaEnrollmentId);
    if (info) void onRemove(info);
  });
  const onAdded = (what: string) => {
    setAdding(null);
    refresh();
    setDone(`${what} was added. You will be asked for it when you sign in; other devices signed in to this account were signed out.`);
  };

  return (
    <section className="card" aria-labelledby="two-step-heading">
      <h2 id="two-step-heading">Two-step verification</h2>
      {factors.length === 0 ? (
        <p>Off. Add a second step so that a password alone cannot open your account.</p>
      ) : (
        <ul className="methods">
          {factors.map((info) => (
            <li key={info.uid} data-testid={`second-factor-${info.factorId}`}>
              <span>
                {factorLabel(info)} <span className="muted">· added {new Date(info.enrollmentTime).toLocaleDateString()}</span>
              </span>
              <button type="button" className="secondary" aria-label={`Remove ${factorLabel(info)}`} disabled={busy} onClick={() => void onRemove(info)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {panel}
      <ErrorAlert error={error} />
      <StatusMessage>{done}</StatusMessage>
      {!user.emailVerified && user.email ? (
        <p>Verify your email address first: two-step verification needs a verified address to recover the account.</p>
      ) : adding === 'totp' ? (
        <AddAuthenticator user={user} onAdded={() => onAdded('The authenticator app')} onCancel={() => setAdding(null)} />
      ) : adding === 'phone' ? (
        <AddPhone user={user} onAdded={() => onAdded('The phone number')} onCancel={() => setAdding(null)} />
      ) : (
        <>
        {!siteFeatures().textMessages && <p className="muted" data-testid="no-text-messages">{noTextMessages}</p>}
        <p>
          <button type="button" className="secondary" onClick={() => { setDone(null); setAdding('totp'); }}>
            Add an authenticator app
          </button>{' '}
          {siteFeatures().textMessages && (
            <button type="button" className="secondary" onClick={() => { setDone(null); setAdding('phone'); }}>
              Add a phone number
            </button>
          )}
        </p>
        </>
      )}
      {factors.length > 0 && <RecoveryCodes user={user} factorCount={factors.length} resume={resume} />}
    </section>
  );
}

interface AddProps {
  user: User;
  onAdded: () => void;
  onCancel: () => void;
}

/**
 * The name the authenticator app shows for the entry: the site's name (the page title) and where it
 * is, rather than a bare address such as "127.0.0.1".
 */
function authenticatorIssuer(): string {
  const site = document.title.trim() || 'Hearth';
  return `${site} (${window.location.hostname})`;
}

function AddAuthenticator({ user, onAdded, onCancel }: AddProps) {
  const [secret, setSecret] = useState<TotpSecret | null>(null);
  const [qr, setQr] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [name, setName] = useState('Authenticator app');
  const start = useAction(async () => {
    const session = await multiFactor(user).getSession();
    const generated = await TotpMultiFactorGenerator.generateSecret(session);
    setQr(await toDataURL(generated.generateQrCodeUrl(user.email ?? user.uid, authenticatorIssuer()), { margin: 1, width: 200 }));
    setSecret(generated);
  });
  const finish = useAction(async () => {
    if (!secret) return;
    await multiFactor(user).enroll(TotpMultiFactorGenerator.assertionForEnrollment(secret, code.trim()), name.trim() || null);
    onAdded();
  });
  if (!secret) {
    return (
      <form onSubmit={start.onSubmit}>
        <p>You need an authenticator app on your phone (any that supports time-based codes).</p>
        <ErrorAlert error={start.error} />
        <button type="submit" disabled={start.busy}>
          Start
        </button>{' '}
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </form>
    );
  }
  return (
    <form onSubmit={finish.onSubmit}>
      <p>Scan this code with the app, or type the key into it; then enter the code the app shows.</p>
      {qr && <img src={qr} width={200} height={200} alt="QR code holding the key for your authenticator app" />}
      <p>
        Key: <code data-testid="totp-secret">{secret.secretKey}</code>
      </p>
      <Field label="Code from the app" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={setCode} />
      <Field label="Name for it" value={name} onChange={setName} />
      <ErrorAlert error={finish.error} overrides={totpCodeErrors} />
      <button type="submit" disabled={finish.busy}>
        Turn on
      </button>{' '}
      <button type="button" className="secondary" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

function AddPhone({ user, onAdded, onCancel }: AddProps) {
  const { auth } = useAuthState();
  const check = useRef<HTMLDivElement>(null);
  const [phoneNumber, setPhoneNumber] = useState('');
  const [verificationId, setVerificationId] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const send = useAction(async () => {
    const session = await multiFactor(user).getSession();
    const number = phoneNumber.replace(/[\s()-]/g, '');
    setVerificationId(await withHumanCheck(auth, check.current, (verifier) => new PhoneAuthProvider(auth).verifyPhoneNumber({ phoneNumber: number, session }, verifier)));
  });
  const finish = useAction(async () => {
    if (!verificationId) return;
    await multiFactor(user).enroll(PhoneMultiFactorGenerator.assertion(PhoneAuthProvider.credential(verificationId, code.trim())), 'Phone');
    onAdded();
  });
  return (
    <>
      <form onSubmit={send.onSubmit}>
        <Field label="Phone number, with country code" type="tel" autoComplete="tel" required value={phoneNumber} onChange={setPhoneNumber} />
        <div ref={check} />
        <ErrorAlert error={send.error} />
        <button type="submit" className={verificationId ? 'secondary' : undefined} disabled={send.busy}>
          {verificationId ? 'Send a new code' : 'Send code'}
        </button>{' '}
        <button type="button" className="secondary" onClick={onCancel}>
          Cancel
        </button>
      </form>
      {verificationId && (
        <form onSubmit={finish.onSubmit}>
          <Field label="Code from the text message" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={setCode} />
          <ErrorAlert error={finish.error} />
          <button type="submit" disabled={finish.busy}>
            Turn on
          </button>
        </form>
      )}
    </>
  );
}
