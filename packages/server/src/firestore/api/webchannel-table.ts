import { addressKey } from '../../http/address-key.js';
import type { FirestoreCaller } from './access.js';
import type { ChannelSession } from './webchannel-session.js';

/** Who holds a session, for the bounds: the administrator, a user, or an address. */
export interface Holder {
  kind: 'admin' | 'user' | 'anonymous';
  address: string;
  user?: string;
}

export function holderOf(caller: FirestoreCaller | undefined, ip: string): Holder {
  const address = addressKey(ip);
  if (caller?.kind === 'admin') return { kind: 'admin', address };
  if (caller?.kind === 'user') return { kind: 'user', address, user: caller.claims.sub };
  return { kind: 'anonymous', address };
}

/**
 * The open sessions, bounded so that nobody can fill the table for everyone else: each address
 * and each user has a share, callers that proved no identity may fill only part of the table and
 * signed-in users a larger part, and the rest is kept for the administrator.
 */
export class SessionTable {
  private readonly sessions = new Map<string, { session: ChannelSession; holder: Holder }>();
  private readonly perAddress = new Map<string, number>();
  private readonly perUser = new Map<string, number>();
  private readonly byKind = { admin: 0, user: 0, anonymous: 0 };

  constructor(private readonly limits: { maxSessions: number; perAddress: number; perUser: number }) {}

  get size(): number {
    return this.sessions.size;
  }

  get(id: string): ChannelSession | undefined {
    return this.sessions.get(id)?.session;
  }

  *values(): IterableIterator<ChannelSession> {
    for (const entry of [...this.sessions.values()]) yield entry.session;
  }

  /** Why this holder may not open another session now; undefined if it may. */
  refusal(holder: Holder): string | undefined {
    const { maxSessions } = this.limits;
    if (this.sessions.size >= maxSessions) return 'Too many open streams.';
    if (holder.kind === 'admin') return undefined;
    if ((this.perAddress.get(holder.address) ?? 0) >= this.limits.perAddress) return 'Too many open streams from this address.';
    if (holder.kind === 'user') {
      if ((this.perUser.get(holder.user!) ?? 0) >= this.limits.perUser) return 'Too many open streams for this user.';
      if (this.byKind.user + this.byKind.anonymous >= Math.floor(maxSessions * 0.9)) return 'Too many open streams.';
      return undefined;
    }
    if (this.byKind.anonymous >= Math.floor(maxSessions * 0.5)) return 'Too many open streams.';
    return undefined;
  }

  add(session: ChannelSession, holder: Holder): void {
    this.sessions.set(session.id, { session, holder });
    this.byKind[holder.kind]++;
    if (holder.kind !== 'admin') bump(this.perAddress, holder.address, 1);
    if (holder.user !== undefined) bump(this.perUser, holder.user, 1);
  }

  delete(session: ChannelSession): void {
    const entry = this.sessions.get(session.id);
    if (!entry) return;
    this.sessions.delete(session.id);
    const { holder } = entry;
    this.byKind[holder.kind]--;
    if (holder.kind !== 'admin') bump(this.perAddress, holder.address, -1);
    if (holder.user !== undefined) bump(this.perUser, holder.user, -1);
  }

  clear(): void {
    for (const session of this.values()) this.delete(session);
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
}
