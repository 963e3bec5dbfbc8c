import type { Auth } from 'firebase/auth';
import { useCallback, useEffect, useRef, useState } from 'react';
import { passkeyAutofillAvailable, passkeyRequestAborted, signInWithPasskey } from './passkeys';

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
 * too. Its error is one of a passkey picked in the autofill (an abort is not one).
 */
export function usePasskeyAutofill(auth: Auth, returnTo: string, enabled: boolean): { error: unknown; stop: () => Promise<void> } {
  const [error, setError] = useState<unknown>(null);
  const pending = useRef<Pending | null>(null);
  useEffect(() => {
    if (!enabled) return;
    const controller = new AbortController();
    let settle = () => {};
    const settled = new Promise<void>((resolve) => (settle = resolve));
    const current: Pending = { controller, settled };
    pending.current = current;
    void (async () => {
      try {
        if (!(await passkeyAutofillAvailable()) || controller.signal.aborted) return;
        setError(null);
        await signInWithPasskey(auth, returnTo, { mediation: 'conditional', signal: controller.signal, onSettled: settle });
      } catch (caught: unknown) {
        if (!controller.signal.aborted && !passkeyRequestAborted(caught)) setError(caught);
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
