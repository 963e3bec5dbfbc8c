import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { announceActionStart, onActionStart } from './page-activity';

/**
 * Runs async work once at a time (a second call while busy is ignored), keeping its error and busy
 * state. Starting announces itself to the page (page-activity.ts); the error clears when any
 * action starts, here or on another card.
 */
export function useTask() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const running = useRef(false);
  const token = useRef(Symbol('task'));
  useEffect(() => onActionStart(() => setError(null)), []);
  const run = useCallback(async (work: () => Promise<void>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    announceActionStart(token.current);
    try {
      await work();
    } catch (caught: unknown) {
      setError(caught);
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

/** Runs a form's async work once at a time, keeping its error and busy state. */
export function useAction(work: () => Promise<void>) {
  const { busy, error, run } = useTask();
  const onSubmit = useCallback(
    (event: FormEvent<HTMLFormElement>) => {
      event.preventDefault();
      void run(work);
    },
    [run, work],
  );
  return { busy, error, onSubmit };
}

/**
 * A success message (for StatusMessage) that clears as soon as the next action starts anywhere on
 * the page, so "Your name was saved." does not sit beside a later, unrelated outcome.
 */
export function useStatus(initial: string | null = null): [string | null, (message: string | null) => void] {
  const [message, setMessage] = useState<string | null>(initial);
  useEffect(() => onActionStart(() => setMessage(null)), []);
  return [message, setMessage];
}
