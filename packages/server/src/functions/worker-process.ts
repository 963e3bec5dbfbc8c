/**
 * One worker: a child process running worker/worker-runtime.ts in the code base's folder, reached
 * over a loopback port with a key handed over IPC. A worker that dies is started again (1 s, doubling
 * to 30 s while it keeps dying early); calls made meanwhile wait for it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';

const runtimeFile = new URL('./worker/worker-runtime.ts', import.meta.url).pathname;
const tsxLoader = import.meta.resolve('tsx');

export interface WorkerAnswer {
  status: number;
  headers: Headers;
  body: Buffer;
  /** What the function printed during this invocation (with `invocationId`), in order. */
  logs: string[];
}

/** Lines kept per invocation. */
const maxInvocationLines = 100;

/** The worker did not answer: it died, or the call outlived its timeout. */
export class WorkerUnavailable extends Error {
  constructor(
    message: string,
    /** 'timeout': the function ran past its time (its failure); 'down': the worker was not there (not the function's). */
    readonly reason: 'timeout' | 'down' = 'down',
  ) {
    super(message);
    this.name = 'WorkerUnavailable';
  }
}

export interface WorkerLogLine {
  time: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

export class WorkerProcess {
  private child: ChildProcess | undefined;
  private port: number | undefined;
  private readonly key = randomBytes(32).toString('base64url');
  /**
   * What the worker's firebase-admin presents to Hearth (auth/api/functions-credential.ts): minted at
   * each start, so a worker's secret dies with it; handed over IPC, never in the environment.
   */
  private secret: string | undefined;
  private ready: Promise<void> | undefined;
  private closed = false;
  private restartDelayMs = 1000;
  private restartTimer: NodeJS.Timeout | undefined;
  /** The last lines the code base printed (its console.log and logger), newest last. */
  readonly lines: WorkerLogLine[] = [];
  /** How many times a worker was started (1 for the first). */
  starts = 0;
  private readonly lineListeners = new Set<(line: WorkerLogLine) => void>();
  /** Lines of invocations in flight, by invocation id. */
  private readonly invocations = new Map<string, string[]>();

  /** Calls in flight, and the ones waiting for room (beyond `limits.concurrency`). */
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly codeBase: string,
    private readonly env: () => NodeJS.ProcessEnv,
    private readonly logger: Logger,
    /** The worker's heap (V8's old space, MiB) and the calls it takes at once. */
    private readonly limits: { memoryMb: number; concurrency: number } = { memoryMb: 256, concurrency: 80 },
  ) {}

  /** Starts the worker (once); resolves when it serves. */
  start(): Promise<void> {
    this.ready ??= this.spawn();
    return this.ready;
  }

  /** Every line the code base prints from now on, until the returned function is called. */
  onLine(listener: (line: WorkerLogLine) => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  /** The running worker's credential; undefined while none runs. */
  get credential(): string | undefined {
    return this.child && this.child.exitCode === null ? this.secret : undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private spawn(): Promise<void> {
    this.starts++;
    const startedAt = Date.now();
    const child = fork(runtimeFile, [], {
      cwd: this.codeBase,
      env: this.env(),
      execArgv: ['--import', tsxLoader, `--max-old-space-size=${this.limits.memoryMb}`],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'json',
    });
    this.child = child;
    this.secret = randomBytes(32).toString('base64url');
    this.port = undefined;
    this.capture(child, 'stdout');
    this.capture(child, 'stderr');
    return new Promise<void>((resolveReady, rejectReady) => {
      child.on('message', (message: { type?: string; port?: number; invocation?: string; text?: string }) => {
        if (message?.type === 'log' && typeof message.invocation === 'string' && typeof message.text === 'string') {
          const lines = this.invocations.get(message.invocation);
          if (lines && lines.length < maxInvocationLines) lines.push(...message.text.split('\n').filter((line) => line !== '').slice(0, maxInvocationLines - lines.length));
          return;
        }
        if (message?.type === 'ready' && typeof message.port === 'number') {
          this.port = message.port;
          resolveReady();
        }
      });
      child.once('exit', (code, signal) => {
        this.port = undefined;
        if (this.child === child) {
          this.child = undefined;
          this.secret = undefined;
        }
        rejectReady(new WorkerUnavailable(`the functions worker exited (${signal ?? code}) before it served`));
        if (this.closed) return;
        // A worker that ran a while died of something passing; one that dies at once is failing to load.
        this.restartDelayMs = Date.now() - startedAt > 60_000 ? 1000 : Math.min(this.restartDelayMs * 2, 30_000);
        this.logger.warn({ code, signal, restartInMs: this.restartDelayMs }, 'the functions worker exited; starting it again');
        const next = new Promise<void>((resolveNext, rejectNext) => {
          this.restartTimer = setTimeout(() => {
            this.restartTimer = undefined;
            if (this.closed) return rejectNext(new WorkerUnavailable('the functions worker is stopped'));
            this.spawn().then(resolveNext, rejectNext);
          }, this.restartDelayMs);
        });
        next.catch(() => undefined);
        this.ready = next;
      });
      child.send({ type: 'start', key: this.key, credential: this.secret });
    });
  }

  private capture(child: ChildProcess, stream: 'stdout' | 'stderr'): void {
    let partial = '';
    child[stream]!.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      if (partial.length > 16_384) {
        lines.push(partial);
        partial = '';
      }
      for (const text of lines) {
        const line = { time: Date.now(), stream, text: text.slice(0, 16_384) };
        this.lines.push(line);
        if (this.lines.length > 1000) this.lines.shift();
        for (const listener of this.lineListeners) listener(line);
      }
    });
  }

  /** Waits for the worker, then sends it one request; a refusal or time-out is a WorkerUnavailable. */
  async request(path: string, init: { method: string; headers?: Record<string, string>; body?: Buffer | string; timeoutMs: number; invocationId?: string }): Promise<WorkerAnswer> {
    const deadline = AbortSignal.timeout(init.timeoutMs);
    if (this.closed) throw new WorkerUnavailable('the functions worker is stopped');
    await Promise.race([
      this.start(),
      new Promise((_, reject) => deadline.addEventListener('abort', () => reject(new WorkerUnavailable('the functions worker did not start in time')), { once: true })),
    ]);
    if (this.port === undefined) throw new WorkerUnavailable('the functions worker is restarting');
    // Beyond the worker's concurrency a call waits its turn (within its own time).
    if (this.active >= this.limits.concurrency) {
      await new Promise<void>((resolveTurn, reject) => {
        const turn = () => {
          deadline.removeEventListener('abort', giveUp);
          resolveTurn();
        };
        const giveUp = () => {
          this.waiting.splice(this.waiting.indexOf(turn), 1);
          reject(new WorkerUnavailable('the function did not start within its time: the worker is busy', 'timeout'));
        };
        this.waiting.push(turn);
        deadline.addEventListener('abort', giveUp, { once: true });
      });
    }
    this.active++;
    const logs: string[] = [];
    if (init.invocationId) this.invocations.set(init.invocationId, logs);
    try {
      const answer = await fetch(`http://127.0.0.1:${this.port}${path}`, {
        method: init.method,
        headers: { ...init.headers, 'x-hearth-worker-key': this.key, ...(init.invocationId ? { 'x-hearth-invocation': init.invocationId } : {}) },
        ...(init.body !== undefined && init.method !== 'GET' && init.method !== 'HEAD' ? { body: typeof init.body === 'string' ? init.body : new Uint8Array(init.body) } : {}),
        signal: deadline,
        redirect: 'manual',
      });
      return { status: answer.status, headers: answer.headers, body: Buffer.from(await answer.arrayBuffer()), logs };
    } catch (error) {
      if (deadline.aborted) throw new WorkerUnavailable(`the function did not finish within ${Math.round(init.timeoutMs / 1000)} s`, 'timeout');
      throw new WorkerUnavailable(`the functions worker did not answer: ${(error as Error).message}`);
    } finally {
      this.active--;
      this.waiting.shift()?.();
      // Lines travel over IPC, the answer over HTTP: the last ones may come just after it.
      const id = init.invocationId;
      if (id) setTimeout(() => this.invocations.delete(id), 1000).unref();
    }
  }

  /** Ends the worker (a function that outlived its timeout is stopped this way, then started again). */
  kill(): void {
    this.child?.kill('SIGKILL');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(force);
  }
}
