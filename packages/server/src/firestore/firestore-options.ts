import type { WebChannelOptions } from './api/webchannel.js';

/** The document database's settings (the flags of `hearth start` that concern it). */
export interface FirestoreOptions {
  /** What WebChannel sessions may hold unacknowledged, per session, per address and in total, and sessions per address (defaults in webchannel.ts). */
  webChannelLimits?: Pick<WebChannelOptions, 'maxQueuedChars' | 'maxQueuedCharsPerAddress' | 'maxQueuedCharsTotal' | 'maxSessionsPerAddress'>;
  host: string;
  /** Development mode: any API key names the default project and `Bearer owner` is an admin. */
  dev: boolean;
  /** The project that unknown API keys (dev) and the web app use. */
  defaultProjectId: string;
  /** Composite indexes for the document database, in firestore.indexes.json form. */
  indexesFile?: string;
  /** Values allowed in an `in` / `array-contains-any` filter (30 today; 10 for old clients). */
  maxInValues: number;
  /** How long replaced and deleted document versions stay readable at a past `readTime` (Firestore: 1 hour). */
  versionRetentionSeconds: number;
  /** Also serve gRPC (the Node SDKs' transport) on this port; it is always served on `port` too. */
  grpcPort?: number;
  /** `--rules FILE`: the default project's Firestore security rules, released at start and on every change. */
  rulesFile?: string;
  /**
   * Released to the default project outside --dev when it has no rules yet and no --rules is
   * given: the web app's own rules (each user reads and writes only users/{uid}/...).
   */
  shippedRulesFile?: string;
}

export const defaultFirestoreOptions = {
  maxInValues: 30,
  versionRetentionSeconds: 3600,
} satisfies Partial<FirestoreOptions>;
