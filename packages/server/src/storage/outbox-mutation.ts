import type { Mutation } from './store.js';

/** The mutations of the mail outbox, which each backend applies in its own outbox rows module. */
export type OutboxMutation = Extract<
  Mutation,
  { kind: 'insertOutboxMessage' | 'updateMailDelivery' | 'deleteOutboxMessage' | 'deleteOutboxDecoys' | 'clearOutbox' | 'pruneOutbox' }
>;

const outboxMutationKinds = new Set<string>(['insertOutboxMessage', 'updateMailDelivery', 'deleteOutboxMessage', 'deleteOutboxDecoys', 'clearOutbox', 'pruneOutbox']);

export function isOutboxMutation(mutation: Mutation): mutation is OutboxMutation {
  return outboxMutationKinds.has(mutation.kind);
}
