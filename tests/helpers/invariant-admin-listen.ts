/**
 * The server SDK's listeners (@google-cloud/firestore's onSnapshot, Listen over gRPC) as one caller, in the rules
 * invariant: what each snapshot shows is judged (by get or list, as the firebase SDK's), and each listener's final
 * state is compared with the emulator's. Its Listen messages are not logged by the SDK; the raw streams and the
 * firebase SDK's cover those.
 */
import type { DocumentSnapshot, Firestore } from 'firebase-admin/firestore';
import { adminSdkAs, sdkQuery } from './invariant-admin-sdk.js';
import type { Ledger } from './invariant-ledger.js';
import { sentinelQuery } from './invariant-listen.js';
import type { SdkListenerState } from './invariant-sdk.js';
import type { InvariantServer } from './invariant-servers.js';
import { fromSdkData } from './invariant-wire.js';
import type { CallerName, QuerySpec, Round } from './invariant-world.js';

export class AdminSdkListeners {
  readonly kind = 'admin-grpc';
  readonly listeners: SdkListenerState[] = [];
  private readonly unsubscribes: Array<() => void> = [];
  private readonly db: Firestore;
  private readonly sentinel: SdkListenerState;

  constructor(
    readonly server: InvariantServer,
    readonly round: Round,
    readonly caller: CallerName,
    private readonly ledger: Ledger,
  ) {
    this.db = adminSdkAs(server, caller);
    this.sentinel = this.listen({ query: sentinelQuery(round) });
    this.listeners.pop();
  }

  listen(target: { query: QuerySpec } | { document: string }): SdkListenerState {
    const state: SdkListenerState = { label: 'query' in target ? target.query.label : `doc ${target.document}`, documents: new Map(), snapshots: 0, synced: false };
    this.listeners.push(state);
    // The server SDK's errors carry gRPC's numeric code (7) where the firebase SDK says permission-denied.
    const failed = (error: Error & { code?: unknown }) => {
      state.error = error.code === 7 || /^Error 7:|PERMISSION_DENIED/.test(error.message) ? 'permission-denied' : String(error.code ?? error.message);
    };
    const show = (docs: DocumentSnapshot[]) => {
      state.snapshots++;
      state.synced = true;
      state.documents = new Map(docs.filter((doc) => doc.exists).map((doc) => [doc.ref.path, fromSdkData(doc.data())]));
      for (const [path, data] of state.documents) {
        this.ledger.deliver({ round: this.round, caller: this.caller, transport: 'sdk:admin-grpc', path: 'onSnapshot (shown to the app)', method: 'read', request: `admin SDK onSnapshot ${state.label} as ${this.caller}`, document: path, data });
      }
    };
    if ('document' in target) this.unsubscribes.push(this.db.doc(target.document).onSnapshot((snapshot) => show([snapshot]), failed));
    else this.unsubscribes.push(sdkQuery(this.db, target.query).onSnapshot((snapshot) => show(snapshot.docs), failed));
    return state;
  }

  async settled(mark: string, ms = 20_000): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!(this.listeners.every((state) => state.synced || state.error !== undefined) && [...this.sentinel.documents.values()].some((data) => data.title === mark))) {
      if (this.sentinel.error || Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return true;
  }

  pending(mark: string): string {
    const waiting = this.listeners.filter((state) => !state.synced && state.error === undefined).map((state) => state.label);
    const seen = [...this.sentinel.documents.values()].some((data) => data.title === mark);
    return `${seen ? 'sentinel seen' : `sentinel not at ${mark}`}${waiting.length ? `; no snapshot for: ${waiting.join(', ')}` : ''}`;
  }

  async close(): Promise<void> {
    for (const unsubscribe of this.unsubscribes) unsubscribe();
    await this.db.terminate().catch(() => undefined);
  }
}
