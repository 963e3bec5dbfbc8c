/**
 * The official SDKs' listeners in the rules invariant. The full `firebase` v12 SDK runs in Node twice: its Node
 * build (Listen over gRPC) and its browser build (Listen over WebChannel; Node's fetch streams stand in for the
 * browser's XHR, the SDK's own `useFetchStreams` setting). Each caller gets a module instance of its own (each
 * build is bundled once and imported once per caller), so the SDK's debug log, which prints every Listen message
 * it receives, is that caller's: those messages go to the ledger like the raw streams' (with `removedTargetIds`
 * too), and each snapshot's documents as what the app was shown. Users sign in with Hearth's real ID tokens
 * (`mockUserToken` as a string is sent as is); the emulator gets unsigned tokens with the same claims.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import type * as FirebaseApp from 'firebase/app';
import type * as FirebaseFirestore from 'firebase/firestore';
import { repoRoot } from './hearth.js';
import type { Ledger } from './invariant-ledger.js';
import type { InvariantServer } from './invariant-servers.js';
import { sentinelQuery } from './invariant-listen.js';
import { canonicalData, type CallerName, type DocData, type QuerySpec, type Round } from './invariant-world.js';
import { fromSdkData, fromWireFields } from './invariant-wire.js';

export type SdkKind = 'firebase-grpc' | 'firebase-webchannel';

type SdkModule = typeof FirebaseFirestore & Pick<typeof FirebaseApp, 'initializeApp' | 'deleteApp' | 'onLog'>;

const bundled = new Map<SdkKind, Promise<string>>();
let instances = 0;

/** The SDK's build for that transport, bundled with its own copy of everything, written once per process. */
function bundleFile(kind: SdkKind): Promise<string> {
  let file = bundled.get(kind);
  if (!file) {
    file = (async () => {
      const names = ['initializeFirestore', 'connectFirestoreEmulator', 'onSnapshot', 'collection', 'collectionGroup', 'query', 'where', 'limit', 'doc', 'documentId', 'terminate', 'setLogLevel', 'disableNetwork', 'enableNetwork'];
      const result = await build({
        stdin: { contents: `export { initializeApp, deleteApp, onLog } from 'firebase/app';\nexport { ${names.join(', ')} } from 'firebase/firestore';\n`, resolveDir: repoRoot, loader: 'ts' },
        bundle: true,
        format: 'esm',
        platform: kind === 'firebase-grpc' ? 'node' : 'browser',
        target: 'es2022',
        write: false,
        logLevel: 'silent',
        plugins: [quietDebugLines],
        // The Node build's CommonJS dependencies (grpc-js) require Node's modules.
        ...(kind === 'firebase-grpc' ? { banner: { js: "import { createRequire as __invariantRequire } from 'node:module'; const require = __invariantRequire(import.meta.url);" } } : {}),
      });
      const dir = join(repoRoot, 'node_modules', '.cache', 'hearth-invariant');
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `${kind}-${process.pid}.mjs`);
      writeFileSync(path, result.outputFiles[0]!.text);
      process.once('exit', () => rmSync(path, { force: true }));
      return path;
    })();
    bundled.set(kind, file);
  }
  return file;
}

/**
 * Two changes to logging only, in the bundle: the SDK's debug lines go to the test's handler and not also to the
 * console, and the Node build writes a message in them as JSON (as the browser build does) instead of
 * util.inspect's text.
 */
const quietDebugLines: Plugin = {
  name: 'invariant-quiet-debug-lines',
  setup(bundler) {
    bundler.onLoad({ filter: /@firebase[\\/](logger|firestore)[\\/]dist[\\/].*\.m?js$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      const original = text;
      text = text.replace('const defaultLogHandler = (instance, logType, ...args) => {', 'const defaultLogHandler = (instance, logType, ...args) => { if (logType === 0) return;');
      text = text.replace('return inspect(value, { depth: 100 });', 'return JSON.stringify(value);');
      return text === original ? undefined : { contents: text, loader: 'js' };
    });
  },
};

/** The state of one SDK listener: the last snapshot's documents, or the error that ended it. */
export interface SdkListenerState {
  label: string;
  documents: Map<string, DocData>;
  error?: string;
  snapshots: number;
  /** The last snapshot came from the server (not only from the SDK's cache, as offline). */
  synced: boolean;
}

/** One caller's SDK client on one server; its listeners record what they were shown. */
export class SdkClient {
  readonly listeners: SdkListenerState[] = [];
  /** The round's sentinel collection: the marks the test writes show up here once the client caught up. */
  private sentinel!: SdkListenerState;
  private readonly unsubscribes: Array<() => void> = [];
  private app!: FirebaseApp.FirebaseApp;
  private db!: FirebaseFirestore.Firestore;
  private sdk!: SdkModule;

  private constructor(
    readonly kind: SdkKind,
    readonly server: InvariantServer,
    readonly round: Round,
    readonly caller: CallerName,
    /** Hearth's deliveries are judged; the emulator's are only compared. */
    private readonly ledger: Ledger | undefined,
  ) {}

  static async open(kind: SdkKind, server: InvariantServer, round: Round, caller: CallerName, ledger: Ledger | undefined): Promise<SdkClient> {
    const client = new SdkClient(kind, server, round, caller, ledger);
    client.sdk = (await import(`${pathToFileURL(await bundleFile(kind)).href}?instance=${++instances}`)) as SdkModule;
    const { sdk } = client;
    sdk.setLogLevel(ledger ? 'debug' : 'silent');
    if (ledger) sdk.onLog((entry) => client.logged(entry.args), { level: 'debug' });
    client.app = sdk.initializeApp({ apiKey: server.apiKey, projectId: server.projectId }, `invariant-${instances}`);
    client.db = sdk.initializeFirestore(client.app, kind === 'firebase-webchannel' ? ({ useFetchStreams: true } as FirebaseFirestore.FirestoreSettings) : {});
    const token = server.tokens[caller];
    const { hostname, port } = new URL(server.url);
    sdk.connectFirestoreEmulator(client.db, hostname, Number(port), token === undefined ? {} : { mockUserToken: token });
    client.sentinel = client.listen({ query: sentinelQuery(round) });
    client.listeners.pop();
    return client;
  }

  /** Listens to a query or a document; its state is kept in `listeners`. */
  listen(target: { query: QuerySpec } | { document: string }): SdkListenerState {
    const { sdk, db } = this;
    const state: SdkListenerState = { label: 'query' in target ? target.query.label : `doc ${target.document}`, documents: new Map(), snapshots: 0, synced: false };
    const options = { includeMetadataChanges: true };
    this.listeners.push(state);
    const failed = (error: { code?: string; message?: string }) => {
      state.error = error.code ?? String(error.message);
    };
    if ('document' in target) {
      this.unsubscribes.push(
        sdk.onSnapshot(
          sdk.doc(db, target.document),
          options,
          (snapshot) => {
            state.snapshots++;
            state.synced = !snapshot.metadata.fromCache;
            state.documents = snapshot.exists() ? new Map([[target.document, fromSdkData(snapshot.data())]]) : new Map();
            for (const [path, data] of state.documents) this.shown(state, path, data);
          },
          failed,
        ),
      );
      return state;
    }
    const spec = target.query;
    const scope = spec.scope;
    let base: FirebaseFirestore.Query = scope.kind === 'group' ? sdk.collectionGroup(db, scope.collectionId) : sdk.collection(db, scope.parent ? `${scope.parent}/${scope.collectionId}` : scope.collectionId);
    for (const filter of spec.filters) {
      if (filter.field === '__name__') base = sdk.query(base, sdk.where(sdk.documentId(), '==', sdk.doc(db, filter.path)));
      else if (filter.op === 'in') base = sdk.query(base, sdk.where(filter.field, 'in', filter.values));
      else base = sdk.query(base, sdk.where(filter.field, filter.op, filter.value));
    }
    if (spec.limit !== undefined) base = sdk.query(base, sdk.limit(spec.limit));
    this.unsubscribes.push(
      sdk.onSnapshot(
        base,
        options,
        (snapshot) => {
          state.snapshots++;
          state.synced = !snapshot.metadata.fromCache;
          state.documents = new Map(snapshot.docs.map((doc) => [doc.ref.path, fromSdkData(doc.data())]));
          for (const [path, data] of state.documents) this.shown(state, path, data);
        },
        failed,
      ),
    );
    return state;
  }

  /**
   * Waits until every listener heard from the server (a snapshot not from the cache, or its error) and the
   * sentinel shows `mark` (every listener then had the commits before it); false after `ms`.
   */
  async settled(mark: string, ms = 20_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    const done = () => this.listeners.every((state) => state.synced || state.error !== undefined) && [...this.sentinel.documents.values()].some((data) => data.title === mark);
    while (!done()) {
      if (this.sentinel.error || Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return true;
  }

  /** Why `settled` would wait: the listeners not yet heard from, and whether the sentinel showed `mark`. */
  pending(mark: string): string {
    const waiting = this.listeners.filter((state) => !state.synced && state.error === undefined).map((state) => state.label);
    const seen = [...this.sentinel.documents.values()].some((data) => data.title === mark);
    return `${seen ? 'sentinel seen' : `sentinel not at ${mark}`}${waiting.length ? `; no server snapshot for: ${waiting.join(', ')}` : ''}`;
  }

  /** Takes the client offline: it listens again, with its resume tokens, at `online()`. */
  offline(): Promise<void> {
    return this.sdk.disableNetwork(this.db);
  }

  online(): Promise<void> {
    return this.sdk.enableNetwork(this.db);
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes) unsubscribe();
    await this.sdk.terminate(this.db).catch(() => undefined);
    await this.sdk.deleteApp(this.app).catch(() => undefined);
  }

  /**
   * A document a snapshot showed: judged by get or list, as the SDK shows what its cache holds (a query's result
   * in a document listener's first snapshot, and the other way round). What came on which target is judged
   * precisely from the Listen messages.
   */
  private shown(state: SdkListenerState, path: string, data: DocData): void {
    this.ledger?.deliver({
      round: this.round,
      caller: this.caller,
      transport: `sdk:${this.kind}`,
      path: 'onSnapshot (shown to the app)',
      method: 'read',
      request: `${this.kind} onSnapshot ${state.label} as ${this.caller}`,
      document: path,
      data,
    });
  }

  /**
   * The SDK's debug line for each Listen message: `RPC 'Listen' stream 0x… received:` then the message as JSON.
   * Documents are judged by the SDK's target they name (its query or document, by the target id it chose).
   */
  private logged(args: unknown[]): void {
    const at = args.findIndex((arg) => typeof arg === 'string' && /RPC 'Listen' stream \S+ received:$/.test(arg));
    if (at < 0 || typeof args[at + 1] !== 'string') {
      const sending = args.findIndex((arg) => typeof arg === 'string' && /RPC 'Listen' stream \S+ sending:$/.test(arg));
      if (sending >= 0 && typeof args[sending + 1] === 'string') this.noteSent(JSON.parse(args[sending + 1] as string));
      return;
    }
    const message = JSON.parse(args[at + 1] as string) as { documentChange?: { document: { name: string; fields?: unknown }; targetIds?: number[]; removedTargetIds?: number[] } };
    const change = message.documentChange;
    if (!change) return;
    const path = change.document.name.split('/documents/')[1]!;
    const data = fromWireFields(change.document.fields);
    for (const [ids, removal] of [
      [change.targetIds ?? [], false],
      [change.removedTargetIds ?? [], true],
    ] as const) {
      for (const id of ids) {
        const target = this.sentTargets.get(id);
        if (!target) continue;
        this.ledger?.deliver({
          round: this.round,
          caller: this.caller,
          transport: `sdk:${this.kind}`,
          path: `Listen message${target.resumed ? ' (SDK resume)' : ''}${removal ? ', removedTargetIds' : ''}`,
          method: target.documents ? 'get' : removal ? 'read' : 'list',
          request: `${this.kind} SDK Listen as ${this.caller}: ${target.description}`,
          document: path,
          data,
        });
      }
    }
  }

  private readonly sentTargets = new Map<number, { documents: boolean; resumed: boolean; description: string }>();

  /** The targets the SDK asked for (its own ids; a resumed one carries a resume token or read time). */
  private noteSent(request: { addTarget?: { targetId: number; documents?: { documents?: string[] }; query?: { parent?: string; structuredQuery?: SentQuery }; resumeToken?: unknown; readTime?: unknown } }): void {
    const target = request.addTarget;
    if (!target) return;
    const resumed = Boolean(target.resumeToken) || Boolean(target.readTime);
    const asked = target.query?.structuredQuery;
    const what = asked
      ? `query ${asked.from?.[0]?.allDescendants ? 'group ' : ''}${asked.from?.[0]?.collectionId ?? '?'} under ${(target.query?.parent ?? '').split('/documents')[1] || '/'}${asked.where ? ` where ${JSON.stringify(asked.where)}` : ''}${asked.limit ? ` limit ${JSON.stringify(asked.limit)}` : ''}`
      : `documents ${(target.documents?.documents ?? []).map((name) => name.split('/documents/')[1]).join(', ')}`;
    this.sentTargets.set(target.targetId, { documents: target.documents !== undefined, resumed, description: `target ${target.targetId}: ${what}${resumed ? ' (resumed)' : ''}` });
  }
}

interface SentQuery {
  from?: Array<{ collectionId?: string; allDescendants?: boolean }>;
  where?: unknown;
  limit?: unknown;
}

/** A listener's state in words, for comparing with the emulator's. */
export function describeState(state: SdkListenerState): string {
  if (state.error) return `error ${state.error}`;
  if (!state.synced) return 'nothing from the server yet';
  return [...state.documents].map(([path, data]) => `${path} ${canonicalData(data)}`).sort().join('; ') || 'empty';
}
