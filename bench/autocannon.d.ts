// Minimal types for the parts of autocannon 8 that bench/ uses (the package ships none).
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Called before each request of a connection; returns the request to send. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | undefined;
    }

    interface Options {
      url: string;
      title?: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Requests to make; when set, `duration` is ignored and the run ends with the last answer. */
      amount?: number;
      pipelining?: number;
      /** Milliseconds between samples; a run also ends only on a sample tick. */
      sampleInt?: number;
      /** Seconds before a request counts as timed out. */
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface Result {
      title?: string;
      url: string;
      connections: number;
      /** Seconds, measured. */
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      mismatches: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      /** Milliseconds. */
      latency: Histogram;
      /** Per-second samples; `total` is all completed requests. */
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }

    interface Instance extends PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
