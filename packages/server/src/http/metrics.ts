import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { pathOf } from './url-path.js';

/**
 * Hearth's metrics, in one process-wide registry (prom-client) that every part counts into by
 * importing this module: the HTTP layer (requests, latency, sign-ins), the document database
 * (commits), the Listen hub, WebChannel and gRPC (live streams). Served as Prometheus text at
 * `/metrics` (console/metrics-routes.ts) and sampled for the console's charts (console/metrics-sampler.ts).
 * Gauges of things several servers in one process each hold (tests start many) are the sum of
 * every live server's source.
 */
export const metricsRegistry = new Registry();

/**
 * Answered requests by route template, method and status, counted in plain maps on the request path
 * and added to the prom-client counter below whenever it is read: prom-client's inc builds a hash
 * of its label object and validates it on every call, which cost more than the rest of counting a
 * small request (an account lookup, a token refresh). The label sets are as bounded as the
 * counter's own (route templates, not URLs).
 */
interface PendingRequests {
  labels: { route: string; method: string; status: string };
  pending: number;
}
const requestCounts = new Map<string, Map<string, Map<number, PendingRequests>>>();

function countRequest(route: string, method: string, status: number): void {
  let byMethod = requestCounts.get(route);
  if (byMethod === undefined) requestCounts.set(route, (byMethod = new Map()));
  let byStatus = byMethod.get(method);
  if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
  const counted = byStatus.get(status);
  if (counted === undefined) byStatus.set(status, { labels: { route, method, status: String(status) }, pending: 1 });
  else counted.pending++;
}

new Counter({
  name: 'hearth_http_requests_total',
  help: 'HTTP requests answered, by route template, method and status.',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [metricsRegistry],
  collect() {
    for (const byMethod of requestCounts.values()) {
      for (const byStatus of byMethod.values()) {
        for (const counted of byStatus.values()) {
          if (counted.pending === 0) continue;
          this.inc(counted.labels, counted.pending);
          counted.pending = 0;
        }
      }
    }
  },
});
const latency = new Histogram({
  name: 'hearth_http_request_duration_seconds',
  help: 'Time to answer HTTP requests, by route template.',
  labelNames: ['route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});
const signIns = new Counter({ name: 'hearth_sign_ins_total', help: 'Successful sign-ins and sign-ups, by method.', labelNames: ['method'] as const, registers: [metricsRegistry] });
const failedSignIns = new Counter({ name: 'hearth_sign_ins_failed_total', help: 'Refused sign-ins and sign-ups, by method.', labelNames: ['method'] as const, registers: [metricsRegistry] });
const commits = new Counter({ name: 'hearth_firestore_commits_total', help: 'Document database commits.', registers: [metricsRegistry] });
const documentsWritten = new Counter({ name: 'hearth_firestore_documents_written_total', help: 'Documents created, changed or deleted by commits.', registers: [metricsRegistry] });
const listenTargets = new Gauge({ name: 'hearth_firestore_listen_targets', help: 'Listen targets (queries and documents being watched) right now.', registers: [metricsRegistry] });
const grpcStreams = new Gauge({ name: 'hearth_grpc_streams', help: 'Open gRPC Listen and Write streams.', registers: [metricsRegistry] });

type Source = () => number;
const sources = { webChannelSessions: new Set<Source>(), storeBytes: new Set<Source>() };
const sumOf = (set: Set<Source>) => [...set].reduce((total, source) => total + source(), 0);

new Gauge({
  name: 'hearth_webchannel_sessions',
  help: 'Open WebChannel (browser Listen/Write) sessions.',
  registers: [metricsRegistry],
  collect() {
    this.set(sumOf(sources.webChannelSessions));
  },
});
new Gauge({
  name: 'hearth_store_bytes',
  help: 'Size of the store on disk (database file and its write-ahead log).',
  registers: [metricsRegistry],
  collect() {
    this.set(sumOf(sources.storeBytes));
  },
});
new Gauge({
  name: 'hearth_process_resident_memory_bytes',
  help: 'Resident memory of the Hearth process.',
  registers: [metricsRegistry],
  collect() {
    this.set(process.memoryUsage.rss());
  },
});

/**
 * Running totals the console's sampler takes differences of (prom-client's own reads are async
 * and walk every label set), and this interval's latencies for exact percentiles.
 */
export const tallies = { requests: 0, errors: 0, signIns: 0, failedSignIns: 0, commits: 0, listenTargets: 0 };
const maxLatencySamples = 10_000;
let latencies: number[] = [];
let latencySeen = 0;

/** The latencies (ms) seen since the last call, a uniform sample of at most 10 000. */
export function takeLatencies(): number[] {
  const taken = latencies;
  latencies = [];
  latencySeen = 0;
  return taken;
}

function recordLatency(ms: number): void {
  latencySeen++;
  if (latencies.length < maxLatencySamples) latencies.push(ms);
  else {
    // Reservoir sampling: every request of the interval is equally likely to be kept.
    const slot = Math.floor(Math.random() * latencySeen);
    if (slot < maxLatencySamples) latencies[slot] = ms;
  }
}

/** Sign-in calls by their path's last segment (v1 `accounts:<verb>`, v3 `relyingparty/<name>`, v2 mfaSignIn). */
const signInMethods: Record<string, string> = {
  'accounts:signInWithPassword': 'password',
  verifyPassword: 'password',
  'accounts:signUp': 'signUp',
  signupNewUser: 'signUp',
  'accounts:signInWithIdp': 'idp',
  verifyAssertion: 'idp',
  'accounts:signInWithCustomToken': 'customToken',
  verifyCustomToken: 'customToken',
  'accounts:signInWithEmailLink': 'emailLink',
  emailLinkSignin: 'emailLink',
  'accounts:signInWithPhoneNumber': 'phone',
  verifyPhoneNumber: 'phone',
  'mfaSignIn:finalize': 'secondFactor',
};

export function signInMethodOf(path: string): string | undefined {
  if (!path.startsWith('/identitytoolkit.googleapis.com/') && !path.startsWith('/www.googleapis.com/identitytoolkit/')) return undefined;
  return signInMethods[path.slice(path.lastIndexOf('/') + 1)];
}

/** Counts every answered request (route template, never the raw URL: ids would explode the labels). */
export function countRequests(app: FastifyInstance): void {
  // `done` rather than an async hook: one promise less on every request.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const ms = reply.elapsedTime;
    countRequest(route, request.method, status);
    latency.observe({ route }, ms / 1000);
    tallies.requests++;
    if (status >= 400) tallies.errors++;
    recordLatency(ms);
    const method = request.method === 'POST' ? signInMethodOf(pathOf(request.url)) : undefined;
    if (method !== undefined) {
      if (status === 200) {
        signIns.inc({ method });
        tallies.signIns++;
      } else if (status >= 400) {
        failedSignIns.inc({ method });
        tallies.failedSignIns++;
      }
    }
    done();
  });
}

export const firestoreMetrics = {
  committed(documents: number): void {
    commits.inc();
    documentsWritten.inc(documents);
    tallies.commits++;
  },
  /** A Listen target was registered; call the answer once when it goes. */
  targetAdded(): () => void {
    listenTargets.inc();
    tallies.listenTargets++;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      listenTargets.dec();
      tallies.listenTargets--;
    };
  },
  /** A gRPC stream opened; call the answer once when it ends. */
  grpcStreamOpened(): () => void {
    grpcStreams.inc();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      grpcStreams.dec();
    };
  },
};

/** A live server's WebChannel session count; the answer removes it (on close). */
export function countWebChannelSessions(source: Source): () => void {
  sources.webChannelSessions.add(source);
  return () => sources.webChannelSessions.delete(source);
}

/** Listen targets registered in this process right now. */
export function listenTargetCount(): number {
  return tallies.listenTargets;
}

export function webChannelSessionCount(): number {
  return sumOf(sources.webChannelSessions);
}

/** A live server's store size on disk; the answer removes it (on close). */
export function countStoreBytes(source: Source): () => void {
  sources.storeBytes.add(source);
  return () => sources.storeBytes.delete(source);
}

/** Successful sign-ins and sign-ups by method since the process started (every project's), for the console's overview. */
export async function signInsByMethod(): Promise<Record<string, number>> {
  const counted: Record<string, number> = {};
  for (const value of (await signIns.get()).values) {
    const method = String(value.labels.method ?? 'other');
    counted[method] = (counted[method] ?? 0) + value.value;
  }
  return counted;
}
