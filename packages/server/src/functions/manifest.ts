/**
 * The code base's functions as the Firebase CLI learns them: the manifest firebase-functions serves
 * at `/__/functions.yaml` (JSON text, spec v1alpha1), each endpoint named by its export. Only what
 * Hearth acts on is read; everything is checked, since the manifest comes from user code.
 */

export type FunctionKind =
  | { type: 'firestore'; eventType: string; database: string; namespace: string; document: string }
  | { type: 'auth'; eventType: string }
  | { type: 'storage'; eventType: string; bucket?: string }
  | { type: 'blocking'; eventType: string; options: Record<string, unknown> }
  | { type: 'https' }
  | { type: 'callable' }
  | { type: 'unsupported'; reason: string };

export interface FunctionEndpoint {
  /** The export's name as deployed (`group-fn` for exports.group.fn). */
  name: string;
  platform: 'gcfv1' | 'gcfv2';
  kind: FunctionKind;
  /** Whether a failed event is delivered again (eventTrigger.retry). */
  retry: boolean;
  /** The function's timeoutSeconds, if it set one. */
  timeoutSeconds?: number;
  /** Its memory (`memory: '512MiB'`), if it set one. */
  availableMemoryMb?: number;
  /** Its concurrency (calls one instance takes at once), if it set one. */
  concurrency?: number;
  region: string;
}

/** v2 Firestore event types and the v1 ones, by the change they ask for. */
export const firestoreEventTypes: Record<string, 'created' | 'updated' | 'deleted' | 'written'> = {
  'google.cloud.firestore.document.v1.created': 'created',
  'google.cloud.firestore.document.v1.updated': 'updated',
  'google.cloud.firestore.document.v1.deleted': 'deleted',
  'google.cloud.firestore.document.v1.written': 'written',
  'google.cloud.firestore.document.v1.created.withAuthContext': 'created',
  'google.cloud.firestore.document.v1.updated.withAuthContext': 'updated',
  'google.cloud.firestore.document.v1.deleted.withAuthContext': 'deleted',
  'google.cloud.firestore.document.v1.written.withAuthContext': 'written',
  'providers/cloud.firestore/eventTypes/document.create': 'created',
  'providers/cloud.firestore/eventTypes/document.update': 'updated',
  'providers/cloud.firestore/eventTypes/document.delete': 'deleted',
  'providers/cloud.firestore/eventTypes/document.write': 'written',
};

export class ManifestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestError';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A v1 resource `projects/p/databases/(default)/documents/a/{b}` -> database and document pattern. */
function v1FirestoreResource(resource: string): { database: string; document: string } | undefined {
  const match = /^projects\/[^/]+\/databases\/([^/]+)\/documents\/(.+)$/.exec(resource);
  return match ? { database: match[1]!, document: match[2]! } : undefined;
}

function kindOf(endpoint: Record<string, unknown>): FunctionKind {
  if (isRecord(endpoint.httpsTrigger)) return { type: 'https' };
  if (isRecord(endpoint.callableTrigger)) return { type: 'callable' };
  if (isRecord(endpoint.blockingTrigger)) {
    const eventType = text(endpoint.blockingTrigger.eventType) ?? '';
    return { type: 'blocking', eventType, options: isRecord(endpoint.blockingTrigger.options) ? endpoint.blockingTrigger.options : {} };
  }
  if (isRecord(endpoint.eventTrigger)) {
    const trigger = endpoint.eventTrigger;
    const eventType = text(trigger.eventType) ?? '';
    const filters = isRecord(trigger.eventFilters) ? trigger.eventFilters : {};
    const patterns = isRecord(trigger.eventFilterPathPatterns) ? trigger.eventFilterPathPatterns : {};
    if (eventType in firestoreEventTypes) {
      if (eventType.startsWith('providers/')) {
        const parsed = v1FirestoreResource(text(filters.resource) ?? '');
        if (!parsed) return { type: 'unsupported', reason: `unreadable resource ${String(filters.resource)}` };
        return { type: 'firestore', eventType, database: parsed.database, namespace: '(default)', document: parsed.document };
      }
      const document = text(patterns.document) ?? text(filters.document);
      if (!document) return { type: 'unsupported', reason: 'a Firestore trigger without a document' };
      return { type: 'firestore', eventType, database: text(filters.database) ?? '(default)', namespace: text(filters.namespace) ?? '(default)', document };
    }
    if (eventType.startsWith('providers/firebase.auth/')) return { type: 'auth', eventType };
    if (eventType.startsWith('google.cloud.storage.object.v1.') || eventType.startsWith('google.storage.object.')) {
      const bucket = text(filters.bucket) ?? text(filters.resource)?.replace(/^projects\/_\/buckets\//, '');
      return { type: 'storage', eventType, ...(bucket ? { bucket } : {}) };
    }
    return { type: 'unsupported', reason: `event type ${eventType} is not delivered by Hearth` };
  }
  if (isRecord(endpoint.scheduleTrigger)) return { type: 'unsupported', reason: 'scheduled functions are not run by Hearth yet' };
  if (isRecord(endpoint.taskQueueTrigger)) return { type: 'unsupported', reason: 'task queue functions are not run by Hearth yet' };
  return { type: 'unsupported', reason: 'unknown trigger' };
}

/** The endpoints of a manifest (the JSON text `/__/functions.yaml` answers with). */
export function parseManifest(body: string): FunctionEndpoint[] {
  let manifest: unknown;
  try {
    manifest = JSON.parse(body);
  } catch {
    throw new ManifestError('the functions manifest is not JSON');
  }
  if (!isRecord(manifest) || !isRecord(manifest.endpoints)) throw new ManifestError('the functions manifest has no endpoints');
  const endpoints: FunctionEndpoint[] = [];
  for (const [name, value] of Object.entries(manifest.endpoints)) {
    if (!isRecord(value)) continue;
    if (!/^[A-Za-z][A-Za-z0-9_-]{0,62}$/.test(name)) throw new ManifestError(`function name ${JSON.stringify(name)} is not one Google deploys`);
    const trigger = isRecord(value.eventTrigger) ? value.eventTrigger : {};
    const timeout = value.timeoutSeconds;
    const regions = Array.isArray(value.region) ? value.region.filter((region): region is string => typeof region === 'string') : [];
    endpoints.push({
      name,
      platform: value.platform === 'gcfv1' ? 'gcfv1' : 'gcfv2',
      kind: kindOf(value),
      retry: trigger.retry === true,
      ...(typeof timeout === 'number' && timeout > 0 ? { timeoutSeconds: timeout } : {}),
      ...(typeof value.availableMemoryMb === 'number' && value.availableMemoryMb >= 128 ? { availableMemoryMb: Math.min(value.availableMemoryMb, 32_768) } : {}),
      ...(typeof value.concurrency === 'number' && value.concurrency >= 1 ? { concurrency: Math.min(Math.floor(value.concurrency), 1000) } : {}),
      region: regions[0] ?? 'us-central1',
    });
  }
  return endpoints;
}
