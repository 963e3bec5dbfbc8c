import { PhoneAuthProvider, reauthenticateWithCredential, type User } from 'firebase/auth';
import { useRef, useState } from 'react';
import { useAuthState } from '../auth-context';
import { ErrorAlert } from '../components/ErrorAlert';
import { Field } from '../components/Field';
import { useStatus, useTask } from '../components/useAction';
import { withHumanCheck } from '../second-factor/human-check';

interface ConfirmByPhoneProps {
  user: User;
  phoneNumber: string;
  disabled: boolean;
  /** Reauthenticates with the code's credential (ConfirmIdentity's: it goes on to a second step if the account has one). */
  confirm: (reauthenticate: () => Promise<unknown>) => Promise<void>;
}

/**
 * "Confirm it's you" for an account that signs in with its phone number: a code by text message
 * (after the in-page human check, as the phone sign-in page does), then the SDK's
 * reauthenticateWithCredential with PhoneAuthProvider's credential.
 */
export function ConfirmByPhone({ user, phoneNumber, disabled, confirm }: ConfirmByPhoneProps) {
  const { auth } = useAuthState();
  const check = useRef<HTMLDivElement>(null);
  const [verificationId, setVerificationId] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [sent, setSent] = useStatus();
  const send = useTask();
  const onSend = () =>
    void send.run(async () => {
      const id = await withHumanCheck(auth, check.current, (verifier) => new PhoneAuthProvider(auth).verifyPhoneNumber(phoneNumber, verifier));
      setVerificationId(id);
      setCode('');
      setSent(`We sent a code to ${phoneNumber}.`);
    });
  return (
    <div className="confirm-by-phone">
      <div ref={check} />
      <button type="button" className={verificationId ? 'secondary' : undefined} disabled={disabled || send.busy} onClick={onSend}>
        {verificationId ? 'Send a new code' : `Text a code to ${phoneNumber}`}
      </button>
      <ErrorAlert error={send.error} />
      {sent && (
        <p role="status" className="status">
          {sent}
        </p>
      )}
      {verificationId && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void confirm(() => reauthenticateWithCredential(user, PhoneAuthProvider.credential(verificationId, code.trim())));
          }}
        >
          <Field label="Code from the text message" inputMode="numeric" autoComplete="one-time-code" required value={code} onChange={setCode} />
          <button type="submit" disabled={disabled}>
            Confirm with code
          </button>
        </form>
      )}
    </div>
  );
}
