/**
 * "An action started somewhere on the page": what clears every success and error message, so a
 * message never outlives the next thing the user does, whichever card it was on. One page is one
 * document, so the listeners are module-wide; each task passes its own token so it can tell its
 * own start from another's.
 */
type Listener = (source: symbol) => void;

const listeners = new Set<Listener>();

export function announceActionStart(source: symbol): void {
  for (const listener of [...listeners]) listener(source);
}

export function onActionStart(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
