import { useCallback, useRef, useState, type FormEvent } from 'react';

/** Runs async work once at a time (a second call while busy is ignored), keeping its error and busy state. */
export function useTask() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const running = useRef(false);
  const run = useCallback(async (work: () => Promise<void>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setError(null);
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
