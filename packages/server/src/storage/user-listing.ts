import type { UserRecord } from './store.js';

/**
 * A realm's accounts in uid order, counted and windowed by the store's primary key: accounts:query
 * without a filter, sorted by uid (its default, and what the console's provider search pages
 * through), without reading, decoding and sorting every account for each page.
 */
export interface UserListing {
  /** How many accounts the realm has. */
  userTotal(projectId: string): Promise<number>;
  /** Up to `limit` accounts after skipping `offset`, by uid in byte order (as listUsers pages them). */
  usersByUid(projectId: string, offset: number, limit: number, descending: boolean): Promise<UserRecord[]>;
}
