import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { ConsoleApiError, SignedOutError } from './api';

/** What went wrong, in words that say what to do next. */
export function describeError(error: unknown): string {
  if (error instanceof SignedOutError) return error.message;
  if (error instanceof ConsoleApiError) {
    if (error.status === 403) return `${error.message} Your session may not be an administrator's; sign in again with the admin key.`;
    if (error.status === 404) return `${error.message} It may have been deleted; go back and reload the list.`;
    if (error.status === 429) return 'Too many requests. Wait a few seconds and try again.';
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

export function ErrorNote({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" className="console-alert">
      {describeError(error)}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="console-loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="console-empty">{children}</p>;
}

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
  /** Takes an answer the page already has (a PATCH's, say) as the loaded data, with no request. */
  replace: (data: T) => void;
}

/** Runs `load` when `key` changes (and on reload), keeping the last answer, the error and whether it is running. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(null);
    loadRef.current().then(
      (answer) => {
        if (!current) return;
        setData(answer);
        setLoading(false);
      },
      (caught: unknown) => {
        if (!current) return;
        setError(caught);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  const replace = useCallback((next: T) => {
    setData(next);
    setError(null);
  }, []);
  return { data, error, loading, reload, replace };
}

/** A button's action with its running flag and error, so a click cannot be sent twice. */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<void>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

export function formatTime(ms: number | string | undefined): string {
  if (ms === undefined || ms === '') return '—';
  const value = typeof ms === 'string' ? Number(ms) : ms;
  if (!Number.isFinite(value) || value <= 0) return '—';
  return new Date(value).toLocaleString();
}
