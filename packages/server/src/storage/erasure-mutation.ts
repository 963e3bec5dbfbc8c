import type { Mutation } from './store.js';

/** The mutations of the account-erasure queue, which each backend applies in its own rows module. */
export type ErasureMutation = Extract<Mutation, { kind: 'insertAccountErasure' | 'deleteAccountErasure' }>;

export function isErasureMutation(mutation: Mutation): mutation is ErasureMutation {
  return mutation.kind === 'insertAccountErasure' || mutation.kind === 'deleteAccountErasure';
}
