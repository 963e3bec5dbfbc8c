import {
  PhoneAuthProvider,
  PhoneMultiFactorGenerator,
  TotpMultiFactorGenerator,
  type MultiFactorInfo,
  type PhoneMultiFactorInfo,
} from 'firebase/auth';
import { useRef, useState } from 'react';
import { Link, Navigate, useNavigate } from 'react-router';
import { useAuthState } from '../auth-context';
import { ErrorAlert } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction } from '../components/useAction';
import { withHumanCheck } from './human-check';

/** How the page names a second factor. */
export function factorLabel(info: MultiFactorInfo): string {
  const name = info.displayName ? ` (${info.displayName})` : '';
  if (info.factorId === TotpMultiFactorGenerator.FACTOR_ID) return `Authenticator app${name}`;
  if (info.factorId === PhoneMultiFactorGenerator.FACTOR_ID) return `Text message to ${(info as PhoneMultiFactorInfo).phoneNumber}${name}`;
  return `Second factor${name}`;
}

/**
 * The second step of a sign-in on an account with two-step verification: pick one of its
 * factors, prove it (a code from the authenticator app, or one sent by text message), and the
 * SDK's resolver completes the sign-in the first step started.
 */
export function SecondFactor() {
  const { secondFactor, startSecondFactor } = useAuthState();
  const [chosen, setChosen] = useState<MultiFactorInfo | null>(secondFactor?.resolver.hints.length === 1 ? secondFactor.resolver.hints[0]! : null);
  if (!secondFactor) return <Navigate to="/signin" replace />;
  const { resolver } = secondFactor;
  return (
    <section className="card">
      <h1>Two-step verification</h1>
      {chosen === null ? (
        <>
          <p>Your password was right. Now prove it is you with one of these:</p>
          <ul className="methods">
            {resolver.hints.map((hint) => (
              <li key={hint.uid}>
                <span>{factorLabel(hint)}</span>
                <button type="button" className="secondary" onClick={() => setChosen(hint)}>
                  Use this
                </button>
              </li>
            ))}
          </ul>
        </>
      ) : chosen.factorId === TotpMultiFactorGenerator.FACTOR_ID ? (
        <TotpStep hint={chosen} />
      ) : (
        <PhoneStep hint={chosen} />
      )}
      <p>
        {resolver.hints.length > 1 && chosen !== null && (
          <button type="button" className="link" onClick={() => setChosen(null)}>
            Use another way
          </button>
        )}{' '}
        <Link to="/signin" onClick={() => startSecondFactor(null)}>
          Cancel
        </Link>
      </p>
    </section>
  );
}

function useFinish() {
  const { secondFactor, startSecondFactor } = useAuthState();
  const navigate = useNavigate();
  return async (finish: (pending: NonNullable<typeof secondFactor>) => Promise<unknown>) => {
    if (!secondFactor) return;
    await finish(secondFactor);
    startSecondFactor(null);
    await navigate(secondFactor.returnTo, { replace: true });
  };
}

function TotpStep({ hint }: { hint: MultiFactorInfo }) {
  const finish = useFinish();
  const [code, setCode] = useState('');
  const { busy, error, onSubmit } = useAction(() =>
    finish(({ resolver }) => resolver.resolveSignIn(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, code.trim()))),
  );
  return (
    <form onSubmit={onSubmit}>
      <p>Enter the code your authenticator app shows for this site{hint.displayName ? ` (${hint.displayName})` : ''}.</p>
      <Field label="Code from the app" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={setCode} />
      <ErrorAlert error={error} />
      <button type="submit" disabled={busy}>
        Verify
      </button>
    </form>
  );
}

function PhoneStep({ hint }: { hint: MultiFactorInfo }) {
  const { auth } = useAuthState();
  const finish = useFinish();
  const { secondFactor } = useAuthState();
  const check = useRef<HTMLDivElement>(null);
  const [verificationId, setVerificationId] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const send = useAction(async () => {
    if (!secondFactor) return;
    const id = await withHumanCheck(auth, check.current, (verifier) =>
      new PhoneAuthProvider(auth).verifyPhoneNumber({ multiFactorHint: hint, session: secondFactor.resolver.session }, verifier),
    );
    setVerificationId(id);
  });
  const verify = useAction(() =>
    finish(({ resolver }) => resolver.resolveSignIn(PhoneMultiFactorGenerator.assertion(PhoneAuthProvider.credential(verificationId ?? '', code.trim())))),
  );
  return (
    <>
      <form onSubmit={send.onSubmit}>
        <p>We will text a code to {(hint as PhoneMultiFactorInfo).phoneNumber}.</p>
        <div ref={check} />
        <ErrorAlert error={send.error} />
        <button type="submit" className={verificationId ? 'secondary' : undefined} disabled={send.busy}>
          {verificationId ? 'Send a new code' : 'Send code'}
        </button>
      </form>
      {verificationId && (
        <form onSubmit={verify.onSubmit}>
          <Field label="Code from the text message" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={setCode} />
          <ErrorAlert error={verify.error} />
          <button type="submit" disabled={verify.busy}>
            Verify
          </button>
        </form>
      )}
    </>
  );
}
