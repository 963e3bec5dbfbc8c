/**
 * A production Hearth (no --dev: rules enforced, real RS256 ID tokens) and the callers of the
 * security tests against it: users signed up through Hearth's Auth, the administrator, nobody;
 * each as @google-cloud/firestore over gRPC (what firebase-admin wraps: server transactions and
 * reads at a read time, which the client SDKs cannot express), as the full `firebase/firestore`
 * client in Node, and as raw REST for exact answers.
 */
import * as grpc from '@grpc/grpc-js';
import { Firestore as GcloudFirestore } from '@google-cloud/firestore';
import { deleteApp, initializeApp, type FirebaseApp } from 'firebase/app';
import { connectAuthEmulator, createUserWithEmailAndPassword, inMemoryPersistence, initializeAuth } from 'firebase/auth';
import { connectFirestoreEmulator, getFirestore, setLogLevel, terminate, type Firestore } from 'firebase/firestore';
import { loadFirestoreRoot, messageFromJson, messageToJson } from '../../packages/server/src/firestore/api/grpc-codec.js';
import { uniqueEmail } from './admin-http.js';
import { startHearth, type TestHearth } from './hearth.js';
import { releaseRules } from './security-rules.js';

setLogLevel('silent');
// google-auth-library looks for a GCP metadata server on an error answer (seconds each) otherwise.
process.env.METADATA_SERVER_DETECTION ??= 'none';

export interface ProductionUser {
  uid: string;
  idToken: string;
  /** `Bearer <ID token>`. */
  authorization: string;
  /** The full client SDK, signed in as this user. */
  client: Firestore;
}

/** A unary gRPC call's outcome: the answer in proto3 JSON, or the status code and details. */
export type GrpcAnswer = { ok: true; body: any } | { ok: false; code: grpc.status; details: string };

export interface RestAnswer {
  status: number;
  /** The parsed JSON (its shape is what the tests assert on), or the text. */
  body: any;
}

export class ProductionFirestore {
  private readonly apps: FirebaseApp[] = [];
  private readonly gcloudClients: GcloudFirestore[] = [];
  private grpcClient: grpc.Client | undefined;

  private constructor(readonly server: TestHearth) {}

  static async start(): Promise<ProductionFirestore> {
    return new ProductionFirestore(await startHearth({ dev: false }));
  }

  get projectId(): string {
    return this.server.projectId;
  }

  get adminAuthorization(): string {
    return `Bearer ${this.server.adminKey}`;
  }

  /** `projects/{p}/databases/(default)/documents` of this project (or another). */
  root(projectId = this.projectId): string {
    return `projects/${projectId}/databases/(default)/documents`;
  }

  name(path: string, projectId = this.projectId): string {
    return `${this.root(projectId)}/${path}`;
  }

  async releaseRules(source: string, projectId = this.projectId): Promise<void> {
    await releaseRules(this.server.url, projectId, source, this.adminAuthorization);
  }

  /** A user signed up through Hearth's Auth with the client SDK, and that SDK's Firestore. */
  async signUp(tag: string): Promise<ProductionUser> {
    const app = initializeApp({ apiKey: this.server.apiKey, projectId: this.projectId }, `${tag}-${this.apps.length}-${Date.now()}`);
    this.apps.push(app);
    const auth = initializeAuth(app, { persistence: inMemoryPersistence });
    connectAuthEmulator(auth, this.server.url, { disableWarnings: true });
    const { user } = await createUserWithEmailAndPassword(auth, uniqueEmail(tag), 'secret123');
    const client = getFirestore(app);
    connectFirestoreEmulator(client, '127.0.0.1', Number(new URL(this.server.url).port));
    const idToken = await user.getIdToken();
    return { uid: user.uid, idToken, authorization: `Bearer ${idToken}`, client };
  }

  /**
   * @google-cloud/firestore (gRPC) sending this `Authorization`: the admin key, a user's ID token,
   * or none (an anonymous caller). Its transactions are server transactions.
   */
  gcloud(authorization: string | undefined, projectId = this.projectId): GcloudFirestore {
    const port = Number(new URL(this.server.url).port);
    const client = new GcloudFirestore({ projectId, host: '127.0.0.1', port, ssl: false, customHeaders: { Authorization: authorization ?? '' } });
    this.gcloudClients.push(client);
    return client;
  }

  /** One REST call under /v1/, as `authorization` (none: anonymous). */
  async rest(method: string, path: string, body?: unknown, authorization?: string): Promise<RestAnswer> {
    const response = await fetch(`${this.server.url}/v1/${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the assertion shows the text
    }
    return { status: response.status, body: parsed };
  }

  /**
   * One unary RPC of google.firestore.v1.Firestore (Commit, BeginTransaction, ...), as
   * `authorization` (none: anonymous), with any message an SDK would never send.
   */
  async grpc(method: string, request: Record<string, unknown>, authorization?: string): Promise<GrpcAnswer> {
    const service = loadFirestoreRoot().lookupService('google.firestore.v1.Firestore');
    const requestType = service.methods[method]!.resolvedRequestType!;
    const responseType = service.methods[method]!.resolvedResponseType!;
    this.grpcClient ??= new grpc.Client(this.server.hostPort, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    if (authorization) metadata.set('authorization', authorization);
    return new Promise((resolve) =>
      this.grpcClient!.makeUnaryRequest(
        `/google.firestore.v1.Firestore/${method}`,
        (json: Record<string, unknown>) => Buffer.from(requestType.encode(messageFromJson(requestType, json)).finish()),
        (bytes: Buffer) => messageToJson(responseType, responseType.decode(bytes) as unknown as Record<string, unknown>),
        request,
        metadata,
        { deadline: Date.now() + 60_000 },
        (error, response) => resolve(error ? { ok: false, code: error.code, details: error.details } : { ok: true, body: response }),
      ),
    );
  }

  /** A commit as the administrator; its commit time. */
  async adminCommit(writes: unknown[], projectId = this.projectId): Promise<string> {
    const answer = await this.rest('POST', `${this.root(projectId)}:commit`, { writes }, this.adminAuthorization);
    if (answer.status !== 200) throw new Error(`admin commit failed: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body.commitTime as string;
  }

  async close(): Promise<void> {
    this.grpcClient?.close();
    await Promise.all(this.gcloudClients.splice(0).map((client) => client.terminate().catch(() => undefined)));
    await Promise.all(this.apps.splice(0).map(async (app) => {
      await terminate(getFirestore(app)).catch(() => undefined);
      await deleteApp(app);
    }));
    await this.server.close();
  }
}

/** Proto3 JSON fields of plain strings, numbers (integers) and booleans. */
export function wireFields(fields: Record<string, string | number | boolean>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [key, typeof value === 'string' ? { stringValue: value } : typeof value === 'number' ? { integerValue: String(value) } : { booleanValue: value }]),
  );
}

/** A query naming one document by `__name__ ==`. */
export function namedQuery(collectionId: string, name: string): unknown {
  return { from: [{ collectionId }], where: { fieldFilter: { field: { fieldPath: '__name__' }, op: 'EQUAL', value: { referenceValue: name } } } };
}
