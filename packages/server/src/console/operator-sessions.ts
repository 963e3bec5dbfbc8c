import { createHash, randomBytes } from 'node:crypto';

/** Who a console session speaks for: `admin` (signed in with the admin key) or an operator account's email or uid. */
export interface OperatorSession {
  operator: string;
  expiresAt: number;
}

export interface OperatorSessionOptions {
  ttlMs: number;
  /** Sessions kept at once; the oldest goes first (each sign-in needs a credential, so this only bounds memory). */
  maxSessions: number;
  clock: () => number;
  /** Put before every token (a worker of --workers names itself there). */
  tokenPrefix?: string;
}

export const defaultOperatorSessionOptions: OperatorSessionOptions = { ttlMs: 8 * 3600_000, maxSessions: 1000, clock: Date.now };

/**
 * Console sessions, in memory only: a restart signs every operator out, and nothing on disk can be
 * stolen to become one. The cookie carries a random token; only its SHA-256 is kept, so a heap
 * dump does not hand out live cookies either.
 */
export class OperatorSessions {
  private readonly sessions = new Map<string, OperatorSession>();

  constructor(private readonly options: OperatorSessionOptions = defaultOperatorSessionOptions) {}

  /** A new session for `operator`; the token goes to the cookie and nowhere else. */
  start(operator: string): { token: string; session: OperatorSession } {
    const token = `${this.options.tokenPrefix ?? ''}${randomBytes(32).toString('base64url')}`;
    const session = { operator, expiresAt: this.options.clock() + this.options.ttlMs };
    this.sessions.set(hashOf(token), session);
    while (this.sessions.size > this.options.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    return { token, session };
  }

  /** The live session a cookie's token names; an expired one is forgotten on sight. */
  find(token: string | undefined): OperatorSession | undefined {
    if (!token || token.length > 100) return undefined;
    const key = hashOf(token);
    const session = this.sessions.get(key);
    if (!session) return undefined;
    if (session.expiresAt <= this.options.clock()) {
      this.sessions.delete(key);
      return undefined;
    }
    return session;
  }

  end(token: string | undefined): void {
    if (token) this.sessions.delete(hashOf(token));
  }
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
