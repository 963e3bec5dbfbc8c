import type { UserRecord } from '../../storage/store.js';
import { authError } from '../errors.js';
import type { Caller } from './requests.js';

/**
 * The custom claim that makes an account of the default project a console operator
 * (console/operator-accounts.ts): administrator of every project. A service account administers
 * its own project only, so it must not be able to make an operator, nor act as one: only the owner
 * (the admin key or an operator, Caller.isOwner) sets, changes or removes this claim, in any
 * project (the default project is a start flag), and only the owner administers an account that
 * holds it: changes, deletes, replaces by import, or asks its action links.
 */
export const operatorClaim = 'hearthOperator';

/** Whether stored custom claims make the account an operator (the boolean true, nothing else). */
export function holdsOperatorClaim(customAttributes: string | undefined): boolean {
  return operatorClaimOf(customAttributes) === true;
}

/** Whether new custom claims add, change or remove the operator claim. */
export function operatorClaimChanged(before: string | undefined, after: string | undefined): boolean {
  return JSON.stringify(operatorClaimOf(before)) !== JSON.stringify(operatorClaimOf(after));
}

/** Refuses a change of the operator claim by anyone but the owner. */
export function guardOperatorClaim(caller: Caller, before: string | undefined, after: string | undefined): void {
  if (!caller.isOwner && operatorClaimChanged(before, after)) throw operatorsOnly('set or change the hearthOperator claim');
}

/** Refuses administering an operator account (its sign-in methods, state, factors, links) by anyone but the owner. */
export function guardOperatorAccount(caller: Caller, account: Pick<UserRecord, 'customAttributes'> | undefined): void {
  if (caller.isOwner || !account || !holdsOperatorClaim(account.customAttributes)) return;
  throw operatorsOnly('administer a console operator account');
}

/** The refusal's text, as the per-account error of a batch (import, delete). */
export function operatorsOnlyMessage(what: string): string {
  return `INSUFFICIENT_PERMISSION : Only the admin key or a console operator may ${what}.`;
}

function operatorsOnly(what: string) {
  return authError('INSUFFICIENT_PERMISSION', `Only the admin key or a console operator may ${what}.`);
}

function operatorClaimOf(customAttributes: string | undefined): unknown {
  if (!customAttributes) return undefined;
  try {
    const parsed: unknown = JSON.parse(customAttributes);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>)[operatorClaim] : undefined;
  } catch {
    return undefined;
  }
}
