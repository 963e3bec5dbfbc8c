/**
 * Downloads in flight per client address. An open download holds a file handle, or one of the S3
 * client's pooled sockets, until the client has read its last byte, at the client's own pace: a
 * client that opens hundreds of downloads and reads none would otherwise hold every S3 socket and
 * stall everyone else's downloads. Past `max` in flight, a download waits its turn (first come,
 * first served: a gallery of `<img>` tags, which never retries a 429, still loads), up to
 * `maxWaiting`; beyond that the address is answered 429 at once.
 */
export class DownloadsPerAddress {
  private readonly addresses = new Map<string, { active: number; waiting: Array<(granted: boolean) => void> }>();

  constructor(
    private readonly max: number,
    private readonly maxWaiting = max * 4,
  ) {}

  /**
   * A release function once a slot is free; undefined when the address already has `maxWaiting`
   * downloads waiting (answer 429), or when `gone` fired first (the client left while it waited).
   */
  async take(address: string, gone: AbortSignal): Promise<(() => void) | undefined> {
    let entry = this.addresses.get(address);
    if (!entry) {
      entry = { active: 0, waiting: [] };
      this.addresses.set(address, entry);
    }
    if (entry.active < this.max) {
      entry.active++;
      return this.releaser(address);
    }
    if (entry.waiting.length >= this.maxWaiting || gone.aborted) return undefined;
    const queue = entry.waiting;
    const granted = await new Promise<boolean>((resolve) => {
      const onGone = () => {
        const index = queue.indexOf(wake);
        if (index >= 0) queue.splice(index, 1);
        resolve(false);
      };
      const wake = (handedOver: boolean) => {
        gone.removeEventListener('abort', onGone);
        resolve(handedOver);
      };
      queue.push(wake);
      gone.addEventListener('abort', onGone, { once: true });
    });
    return granted ? this.releaser(address) : undefined;
  }

  /** Downloads in flight and waiting for an address (for tests and metrics). */
  load(address: string): { active: number; waiting: number } {
    const entry = this.addresses.get(address);
    return { active: entry?.active ?? 0, waiting: entry?.waiting.length ?? 0 };
  }

  private releaser(address: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const entry = this.addresses.get(address);
      if (!entry) return;
      // The slot passes straight to the next in line (it stays counted as active).
      const next = entry.waiting.shift();
      if (next) return next(true);
      entry.active--;
      if (entry.active <= 0) this.addresses.delete(address);
    };
  }
}
