import { useEffect, useState } from 'react';

export type TaskState<T> =
  | { status: 'idle' }
  | { status: 'pending' }
  | { status: 'done'; value: T }
  | { status: 'failed'; error: unknown };

/** Tasks already started in this page load, by key. */
const started = new Map<string, Promise<unknown>>();

function initial<T>(key: string | null): TaskState<T> {
  return key === null ? { status: 'idle' } : { status: 'pending' };
}

/**
 * Runs `task` at most once per key for the life of the page and follows its outcome. Action
 * codes are single use: a component mounted twice (React's StrictMode does that in development)
 * must not spend the code twice and then report its own second attempt as "already used".
 * A null key runs nothing.
 */
export function useOnce<T>(key: string | null, task: () => Promise<T>): TaskState<T> {
  const [state, setState] = useState<{ key: string | null; state: TaskState<T> }>({ key, state: initial(key) });
  useEffect(() => {
    if (key === null) return;
    let live = true;
    let promise = started.get(key) as Promise<T> | undefined;
    if (!promise) {
      promise = task();
      started.set(key, promise);
    }
    promise.then(
      (value) => live && setState({ key, state: { status: 'done', value } }),
      (error: unknown) => live && setState({ key, state: { status: 'failed', error } }),
    );
    return () => {
      live = false;
    };
    // The task is the one from the render that introduced this key.
  }, [key]);
  return state.key === key ? state.state : initial(key);
}
