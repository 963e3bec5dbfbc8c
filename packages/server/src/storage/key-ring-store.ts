/**
 * Where the token and session-cookie key rings (auth/core/signing-keys.ts) are kept: a private
 * file in the data folder for one process, a row in PostgreSQL shared by several instances. The
 * ring is opaque JSON text here; its shape belongs to the key ring.
 */
export interface KeyRingStore {
  /** The ring's text as last saved, undefined before the first save. */
  read(): Promise<string | undefined>;
  /**
   * Runs `change` on the current text while holding the ring against every other writer (other
   * instances too), saves what it returns unless undefined, and resolves to the text now current.
   */
  update(change: (current: string | undefined) => Promise<string | undefined>): Promise<string | undefined>;
  /** True when other processes may change the ring, so a key unknown here is worth a fresh read. */
  readonly shared: boolean;
}

/** Instance secrets (the captcha key, the MFA sealing key) that every instance must agree on. */
export interface SharedSecretStore {
  /** The secret saved under `name`, or `create()`'s value saved now if none was (the first caller wins). */
  getOrCreate(name: string, create: () => string): Promise<string>;
}
