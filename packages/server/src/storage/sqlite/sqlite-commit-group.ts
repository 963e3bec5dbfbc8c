import type Database from 'better-sqlite3';

/** Why one commit of a group failed (its own error, or the whole group's). */
interface Failure {
  error: unknown;
}

/** One commit waiting for its group: `run` does its work inside the group's transaction. */
interface Pending {
  run: () => { changedRows: number };
  settle: (failure: Failure | undefined) => void;
}

/**
 * Group commit: the commits that arrive while the event loop is busy (several requests read in
 * one turn) share one SQLite transaction and so one WAL fsync, each in a savepoint of its own so
 * that one refused commit undoes only itself. No commit is settled before the group's COMMIT has
 * returned (synchronous=FULL: on disk), so an acknowledged commit stays durable as before. A group
 * stops taking commits past `maxRowsPerGroup` written documents: the rest wait for the next turn,
 * so one group never holds the event loop much longer than one big commit.
 */
export class CommitGroups {
  private readonly pending: Pending[] = [];
  private scheduled = false;
  /** Commits in the last group: more than one says commits are arriving concurrently. */
  private lastGroupSize = 1;

  constructor(
    private readonly db: Database.Database,
    /** Runs last in each group's transaction, once per group. */
    private readonly beforeCommit: () => void,
    private readonly maxRowsPerGroup = 500,
  ) {}

  /** Queues `run` for the next group; settles after the group's COMMIT (or with `run`'s own error). */
  submit<T extends { changedRows: number }>(run: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let value: T | undefined;
      this.pending.push({
        run: () => (value = run()),
        settle: (failure) => (failure ? reject(failure.error) : resolve(value!)),
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      this.flush();
    };
    // While commits arrive concurrently, one more turn of the event loop lets the requests already
    // on their way join this group (PostgreSQL's commit_delay with commit_siblings, in loop turns).
    // A lone writer is not kept waiting.
    setImmediate(this.lastGroupSize > 1 ? () => setImmediate(flush) : flush);
  }

  private flush(): void {
    const group: Pending[] = [];
    const failures: (Failure | undefined)[] = [];
    const savepoint = (item: Pending) => this.db.transaction(item.run)();
    try {
      this.db
        .transaction(() => {
          let rows = 0;
          while (this.pending.length > 0 && rows < this.maxRowsPerGroup) {
            const item = this.pending.shift()!;
            group.push(item);
            try {
              rows += savepoint(item).changedRows;
              failures.push(undefined);
            } catch (error) {
              // Some failures (a full disk, I/O errors) roll the whole transaction back: then no
              // commit of the group can be acknowledged.
              if (!this.db.inTransaction) throw error;
              failures.push({ error });
            }
          }
          this.beforeCommit();
        })
        .immediate();
    } catch (error) {
      for (const item of group) item.settle({ error });
      this.afterFlush();
      return;
    }
    this.lastGroupSize = group.length;
    group.forEach((item, i) => item.settle(failures[i]));
    this.afterFlush();
  }

  private afterFlush(): void {
    if (this.pending.length > 0) this.schedule();
  }
}
