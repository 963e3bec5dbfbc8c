import type { Store, ThrottleRecord } from './store.js';

/**
 * Reading given throttle rows back, for stores other instances write to as well (PostgreSQL): a
 * throttle then merges what the others counted before it decides. A separate interface beside
 * Store, so the SQLite store, which one process owns, needs none.
 */
export interface ThrottleRowReader {
  getThrottleRecords(scope: string, keyHashes: string[], now: number): Promise<ThrottleRecord[]>;
}

export function throttleRowReaderOf(store: Store | undefined): ThrottleRowReader | undefined {
  return store && 'getThrottleRecords' in store && typeof store.getThrottleRecords === 'function' ? (store as Store & ThrottleRowReader) : undefined;
}
