import type { SmsDeliveryMode } from '../auth/phone/sms-delivery.js';

/**
 * What the primary process of `--workers` and its workers say to each other over the IPC channel
 * (child_process.fork). A connection is handed over with its socket as the message's handle.
 */

/** The lines of the start banner only a started Hearth knows, sent once a worker serves. */
export interface ServingSummary {
  url: string;
  defaultApiKey: string;
  rulesSummary: string;
  storageRulesSummary: string;
  functionsSummary: string;
  smsDelivery: SmsDeliveryMode;
}

/** The banner's lines from a started Hearth (server.ts's Hearth has them), serving `url`. */
export function servingSummary(hearth: Omit<ServingSummary, 'url'>, url: string): ServingSummary {
  return {
    url,
    defaultApiKey: hearth.defaultApiKey,
    rulesSummary: hearth.rulesSummary,
    storageRulesSummary: hearth.storageRulesSummary,
    functionsSummary: hearth.functionsSummary,
    smsDelivery: hearth.smsDelivery,
  };
}

/** On SQLite: a database's change log reaches `seq` (a worker's commit), for the other workers' change feeds. */
export interface ChangeLogMessage {
  type: 'change-log';
  db: string;
  seq: number;
}

export type WorkerMessage = { type: 'ready'; summary: ServingSummary } | ChangeLogMessage;

export type PrimaryMessage = { type: 'connection' } | ChangeLogMessage;

/** Set in a worker's environment: its place among the workers (0-based) and the address it serves. */
export const workerIndexVariable = 'HEARTH_WORKER_INDEX';
export const workerUrlVariable = 'HEARTH_WORKER_URL';
/** The primary's private folder of the workers' relay sockets (http/worker-relay.ts). */
export const workerRelayDirVariable = 'HEARTH_WORKER_RELAY_DIR';

export function isWorkerMessage(value: unknown): value is WorkerMessage {
  return typeof value === 'object' && value !== null && ((value as { type?: unknown }).type === 'ready' || isChangeLogMessage(value));
}

export function isPrimaryMessage(value: unknown): value is PrimaryMessage {
  return typeof value === 'object' && value !== null && ((value as { type?: unknown }).type === 'connection' || isChangeLogMessage(value));
}

export function isChangeLogMessage(value: unknown): value is ChangeLogMessage {
  const message = value as Partial<ChangeLogMessage> | null;
  return typeof message === 'object' && message !== null && message.type === 'change-log' && typeof message.db === 'string' && Number.isSafeInteger(message.seq);
}
