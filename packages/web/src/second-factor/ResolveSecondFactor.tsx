import {
  PhoneAuthProvider,
  PhoneMultiFactorGenerator,
  TotpMultiFactorGenerator,
  reload,
  updateCurrentUser,
  type MultiFactorAssertion,
  type MultiFactorInfo,
  type MultiFactorResolver,
  type PhoneMultiFactorInfo,
} from 'firebase/auth';
import { useRef, useState } from 'react';
import { useAuthState } from '../auth-context';
import { ErrorAlert } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useAction } from '../components/useAction';
import { withHumanCheck } from './human-check';
import { recoveryCodeAssertion } from './recovery-codes';

/** How the page names a second factor. */
export function factorLabel(info: MultiFactorInfo): string {
  const kind =
    info.factorId === TotpMultiFactorGenerator.FACTOR_ID ? 'Authenticator app' : info.factorId === PhoneMultiFactorGenerator.FACTOR_ID ? `Text message to ${(info as PhoneMultiFactorInfo).phoneNumber}` : 'Second factor';
  // A name that only repeats the kind ("Authenticator app", the default) is said once.
  const name = info.displayName && info.displayName.trim().toLowerCase() !== kind.toLowerCase() && info.displayName.trim().toLowerCase() !== 'phone' ? ` (${info.displayName})` : '';
  return `${kind}${name}`;
}

/** A wrong authenticator code, told as such (not "check the message": no message was sent). */
export const totpCodeErrors = { 'auth/invalid-verification-code': 'That code is not right. Enter the 6-digit code your authenticator app shows now; it changes every 30 seconds.' };

interface ResolveProps {
  /** From getMultiFactorResolver: the first step that succeeded (a sign-in or a reauthentication). */
  resolver: MultiFactorResolver;
  /** Said above the list of factors when there is more than one. */
  lead: string;
  /** Runs once the resolver completed the first step's sign-in or reauthentication; `byRecoveryCode` when a recovery code did. */
  onResolved: (byRecoveryCode?: boolean) => Promise<void> | void;
}

/**
 * Picks one of the account's second factors and proves it (a code from the authenticator app, or
 * one sent by text message); resolver.resolveSignIn then completes whatever the first step
 * started. Used by the sign-in's second-factor page and inline by "Confirm it's you".
 */
export function ResolveSecondFactor({ resolver, lead, onResolved }: ResolveProps) {
  const { auth } = useAuthState();
  // 'recovery': a one-time recovery code instead of any factor (a lost phone or authenticator app).
  const [chosen, setChosen] = useState<MultiFactorInfo | 'recovery' | null>(resolver.hints.length === 1 ? resolver.hints[0]! : null);
  const resolve = async (assertion: MultiFactorAssertion, byRecoveryCode = false) => {
    const { user } = await resolver.resolveSignIn(assertion);
    // A reauthentication by redirect resolves on the User the SDK restored for the redirect, not
    // on auth.currentUser: make the one holding the fresh sign-in the current user, or the change
    // it was for would go out with the old tokens and be refused as stale.
    // updateCurrentUser keeps a copy without the profile read from the server (its second factors
    // among it), so the copy is read again.
    if (auth.currentUser !== user && auth.currentUser?.uid === user.uid) {
      await updateCurrentUser(auth, user);
      if (auth.currentUser) await reload(auth.currentUser);
    }
    await onResolved(byRecoveryCode);
  };
  return (
    <div className="second-factor">
      {chosen === null ? (
        <>
          <p>{lead}</p>
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
      ) : chosen === 'recovery' ? (
        <RecoveryCodeStep resolve={resolve} />
      ) : chosen.factorId === TotpMultiFactorGenerator.FACTOR_ID ? (
        <TotpStep hint={chosen} resolve={resolve} />
      ) : (
        <PhoneStep hint={chosen} resolver={resolver} resolve={resolve} />
      )}
      {(resolver.hints.length > 1 || chosen === 'recovery') && chosen !== null && (
        <p>
          <button type="button" className="link" onClick={() => setChosen(resolver.hints.length === 1 ? resolver.hints[0]! : null)}>
            Use another way
          </button>
        </p>
      )}
      {chosen !== 'recovery' && (
        <p>
          <button type="button" className="link" onClick={() => setChosen('recovery')}>
            Use a recovery code
          </button>
        </p>
      )}
    </div>
  );
}

type Resolve = (assertion: MultiFactorAssertion, byRecoveryCode?: boolean) => Promise<void>;

function TotpStep({ hint, resolve }: { hint: MultiFactorInfo; resolve: Resolve }) {
  const [code, setCode] = useState('');
  const { busy, error, onSubmit } = useAction(() => resolve(TotpMultiFactorGenerator.assertionForSignIn(hint.uid, code.trim())));
  return (
    <form onSubmit={onSubmit}>
      <p>Enter the code your authenticator app shows for this site{hint.displayName ? ` (${hint.displayName})` : ''}.</p>
      <Field label="Code from the app" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={setCode} />
      <ErrorAlert error={error} overrides={totpCodeErrors} />
      <button type="submit" disabled={busy}>
        Verify
      </button>
    </form>
  );
}

/** A wrong or used recovery code, told as such. */
const recoveryCodeErrors = {
  'auth/invalid-verification-code': 'That recovery code is not right, or it was used already. Each code works once.',
  'auth/missing-code': 'Enter one of your recovery codes.',
};

function RecoveryCodeStep({ resolve }: { resolve: Resolve }) {
  const [code, setCode] = useState('');
  const { busy, error, onSubmit } = useAction(() => resolve(recoveryCodeAssertion(code.trim()), true));
  return (
    <form onSubmit={onSubmit}>
      <p>Lost your phone or authenticator app? Enter one of the recovery codes you saved when you set up two-step verification. Each code works once.</p>
      <Field label="Recovery code" autoComplete="off" spellCheck={false} placeholder="xxxx-xxxx-xxxx" required value={code} onChange={setCode} />
      <ErrorAlert error={error} overrides={recoveryCodeErrors} />
      <button type="submit" disabled={busy}>
        Verify
      </button>
    </form>
  );
}

function PhoneStep({ hint, resolver, resolve }: { hint: MultiFactorInfo; resolver: MultiFactorResolver; resolve: Resolve }) {
  const { auth } = useAuthState();
  const check = useRef<HTMLDivElement>(null);
  const [verificationId, setVerificationId] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const send = useAction(async () => {
    const id = await withHumanCheck(auth, check.current, (verifier) =>
      new PhoneAuthProvider(auth).verifyPhoneNumber({ multiFactorHint: hint, session: resolver.session }, verifier),
    );
    setVerificationId(id);
  });
  const verify = useAction(() => resolve(PhoneMultiFactorGenerator.assertion(PhoneAuthProvider.credential(verificationId ?? '', code.trim()))));
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
