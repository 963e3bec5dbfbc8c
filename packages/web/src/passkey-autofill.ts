import type { Auth } from 'firebase/auth';
import { useCallback, useEffect, useRef, useState } from 'react';
import { noPasskeyPicked, passkeyAutofillAvailable, signInWithPasskey } from './passkeys';

interface Pending {
  controller: AbortController;
  /** Settles once the browser's request is over: a second request before then is refused ("a request is already pending"). */
  settled: Promise<void>;
}

/**
 * Passkeys in the email field's autofill on the sign-in page (WebAuthn conditional mediation):
 * while `enabled`, a passkey request waits in the autofill of the `autocomplete="username webauthn"`
 * field, and a passkey picked there signs in as the button does. The browser holds one request at a
 * time, so `stop` aborts the waiting one, and waits until the browser has let it go, before the
 * page makes another (the passkey button) or signs in another way; turning `enabled` off aborts it
 * too, and a request started again (after a failed password, say) waits for the last to be over.
 * Its error is only a server's refusal of a passkey picked in the autofill: the browser ending the
 * request without one (an abort, no passkey for this site) says nothing to the user.
 */
export function usePasskeyAutofill(auth: Auth, returnTo: string, enabled: boolean): { error: unknown; stop: () => Promise<void> } {
  const [error, setError] = useState<unknown>(null);
  const pending = useRef<Pending | null>(null);
  const lastSettled = useRef<Promise<void>>(Promise.resolve());
  useEffect(() => {
    if (!enabled) return;
    const controller = new AbortController();
    let settle = () => {};
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const current: Pending = { controller, settled };
    const previous = lastSettled.current;
    pending.current = current;
    lastSettled.current = settled;
    void (async () => {
      try {
        await previous;
        if (!(await passkeyAutofillAvailable()) || controller.signal.aborted) return;
        setError(null);
        await signInWithPasskey(auth, returnTo, { mediation: 'conditional', signal: controller.signal, onSettled: settle });
      } catch (caught: unknown) {
        if (!controller.signal.aborted && !noPasskeyPicked(caught)) setError(caught);
      } finally {
        settle();
        if (pending.current === current) pending.current = null;
      }
    })();
    return () => controller.abort();
  }, [auth, returnTo, enabled]);
  const stop = useCallback(async () => {
    const current = pending.current;
    if (!current) return;
    current.controller.abort();
    await current.settled;
  }, []);
  return { error, stop };
}
