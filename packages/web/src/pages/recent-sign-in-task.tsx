import type { MultiFactorResolver, User } from 'firebase/auth';
import { useEffect, useRef, useState } from 'react';
import { useAuthState } from '../auth-context';
import { useTask } from '../components/useAction';
import { secondFactorResolver } from '../second-factor/resolver';
import { ConfirmIdentity } from './ConfirmIdentity';
import { needsRecentSignIn, type ResumableAction } from './recent-sign-in';

interface Waiting {
  action: ResumableAction;
  work: () => Promise<void>;
  resolver: MultiFactorResolver | null;
  /** A fresh panel (its own state) for each time it opens. */
  id: number;
}

let panels = 0;

/**
 * Runs account changes; one refused for want of a recent sign-in opens ConfirmIdentity (`panel`)
 * and is run again once the user has confirmed. `firstStep` (a reauthentication the form itself
 * asks for, like the current password) runs before the change; when the account answers it with
 * multi-factor-auth-required, the panel opens at the second step and then runs the change alone.
 * `ask` opens the panel without trying first.
 */
export function useRecentSignInTask(user: User) {
  const { auth } = useAuthState();
  const task = useTask();
  const [waiting, setWaiting] = useState<Waiting | null>(null);
  const run = (action: ResumableAction, work: () => Promise<void>, firstStep?: () => Promise<void>) =>
    task.run(async () => {
      try {
        if (firstStep) await firstStep();
      } catch (error: unknown) {
        const resolver = secondFactorResolver(auth, error);
        if (!resolver) throw error;
        setWaiting({ action, work, resolver, id: ++panels });
        return;
      }
      try {
        await work();
        setWaiting(null);
      } catch (error: unknown) {
        if (!needsRecentSignIn(error)) throw error;
        setWaiting({ action, work, resolver: null, id: ++panels });
      }
    });
  const ask = (action: ResumableAction, work: () => Promise<void>) => setWaiting({ action, work, resolver: null, id: ++panels });
  const panel = waiting ? (
    <ConfirmIdentity
      key={waiting.id}
      user={user}
      action={waiting.action}
      resolver={waiting.resolver}
      onConfirmed={() => void run(waiting.action, waiting.work)}
      onCancel={() => setWaiting(null)}
    />
  ) : null;
  return { busy: task.busy, error: task.error, run, ask, panel };
}

/**
 * The change a confirmation that reloaded the page came back to finish (`resume`, from
 * /account?resume=…): `work` runs once, on the first render that has it, if it is of `kind`.
 */
export function useResumeOnce<K extends ResumableAction['kind']>(resume: ResumableAction | null | undefined, kind: K, work: (action: Extract<ResumableAction, { kind: K }>) => void): void {
  const resumed = useRef(false);
  useEffect(() => {
    if (resume?.kind !== kind || resumed.current) return;
    resumed.current = true;
    work(resume as Extract<ResumableAction, { kind: K }>);
  });
}
