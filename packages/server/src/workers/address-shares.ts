import { webChannelDefaults } from '../firestore/api/webchannel.js';
import type { FirestoreOptions } from '../firestore/firestore-options.js';

/** The options that hold per-address limits (HearthOptions has them). */
interface PerAddressLimits {
  trustProxy?: string[];
  files: { uploadsPerAddress: number; downloadsPerAddress: number };
  webChannelLimits?: FirestoreOptions['webChannelLimits'];
}

/**
 * Behind a trusted reverse proxy the primary hands the proxy's connections to the workers in
 * turn, so one client's requests reach every worker, and what a worker counts in memory per
 * address (WebChannel sessions and their queued text, uploads and downloads in flight) is only
 * its share of the client's. Each worker then allows a share of each per-address limit (rounded
 * up), so one client behind the proxy gets about what it would from one process, not N times it.
 * Direct clients keep one worker; without --trust-proxy nothing changes.
 */
export function perAddressShares<Options extends PerAddressLimits>(options: Options, workers: number): Options {
  if (workers <= 1 || !options.trustProxy?.length) return options;
  const share = (limit: number) => Math.ceil(limit / workers);
  return {
    ...options,
    files: { ...options.files, uploadsPerAddress: share(options.files.uploadsPerAddress), downloadsPerAddress: share(options.files.downloadsPerAddress) },
    webChannelLimits: {
      ...options.webChannelLimits,
      maxSessionsPerAddress: share(options.webChannelLimits?.maxSessionsPerAddress ?? webChannelDefaults.maxSessionsPerAddress),
      maxQueuedCharsPerAddress: share(options.webChannelLimits?.maxQueuedCharsPerAddress ?? webChannelDefaults.maxQueuedCharsPerAddress),
    },
  };
}
