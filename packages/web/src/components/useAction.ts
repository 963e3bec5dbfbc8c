import { useCallback, useState, type FormEvent } from 'react';

/** Runs a form's async work once at a time, keeping its error and busy state. */
export function useAction(work: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const onSubmit = useCallback(
    async (event: FormEvent<HTMLFormElement>) => {
      event.preventDefault();
      if (busy) return;
      setBusy(true);
      setError(null);
      try {
        await work();
      } catch (caught: unknown) {
        setError(caught);
      } finally {
        setBusy(false);
      }
    },
    [busy, work],
  );
  return { busy, error, onSubmit: (event: FormEvent<HTMLFormElement>) => void onSubmit(event) };
}
