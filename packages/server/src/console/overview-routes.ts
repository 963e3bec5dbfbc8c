import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requestErrors } from '../http/api-error.js';
import { signInsByMethod } from '../http/metrics.js';
import type { AuditEntry, AuditLog } from '../storage/audit-log.js';
import type { OverviewCounts } from '../storage/overview-counts.js';
import type { Store } from '../storage/store.js';
import { requireOperator } from './console-gate.js';
import type { MetricsSample } from './metrics-sampler.js';

export interface OverviewDeps {
  counts: OverviewCounts;
  store: Store;
  auditLog: AuditLog;
  /** Documents in a project's (default) database; undefined while they are being counted (DocumentCounter). */
  documents(projectId: string): Promise<number | undefined>;
  /** The project's Cloud Storage bytes in use. */
  fileBytes(projectId: string): Promise<number>;
  storeBytes(): number;
  latestSample(): MetricsSample | undefined;
  /** Whether mails go out (an SMTP server) or are only kept in the outbox. */
  mailSent: boolean;
  smsDelivery: 'outbox' | 'provider' | 'outbox+provider' | 'none';
  /** Whether the project has Firestore rules released (without, --dev is open and production closed). */
  hasRules(projectId: string): Promise<boolean>;
  dev: boolean;
  clock: () => number;
  /** When each key ring next hands signing to a new key (SigningKeyRing.nextHandover). */
  keyHandovers(now: number): { what: string; publishedAt: number; signsFrom: number }[];
  isOwnerCredential(request: FastifyRequest): boolean;
}

export interface Overview {
  users: { total: number; newToday: number; signInsByMethod: Record<string, number> };
  /** null while the first count runs (the page says "counting…"). */
  documents: number | null;
  storage: { storeBytes: number; fileBytes: number };
  now: { requestsPerSec: number; errorsPerSec: number; at: number } | null;
  mail: { delivery: 'smtp' | 'outbox'; queued: number; failed: number; kept: number };
  sms: { delivery: OverviewDeps['smsDelivery']; kept: number };
  recentAudit: AuditEntry[];
  warnings: string[];
}

const keptLimit = 500;
/** A handover this close is "about to rotate": the prepublish hour and the hour before it. */
const rotationWarningMs = 2 * 60 * 60_000;
const projectPattern = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * `GET /hearth/v1/projects/{projectId}/overview`: what an operator looks at first, in one answer of
 * counted queries (no scan in code) and a document count kept by the change feed, so it stays fast
 * with 100k users and a million documents.
 */
export function registerOverviewRoutes(app: FastifyInstance, deps: OverviewDeps): void {
  app.get('/hearth/v1/projects/:projectId/overview', async (request): Promise<Overview> => {
    requireOperator(request, deps.isOwnerCredential);
    const { projectId } = request.params as { projectId: string };
    if (!projectPattern.test(projectId)) throw requestErrors.invalidArgument('That is not a project id.');
    const now = deps.clock();
    const startOfDay = new Date(now).setUTCHours(0, 0, 0, 0);
    const [projects, users, documents, fileBytes, byMethod, mails, texts, recentAudit, hasRules] = await Promise.all([
      deps.store.listProjects(),
      deps.counts.users(projectId, startOfDay),
      deps.documents(projectId),
      deps.fileBytes(projectId),
      signInsByMethod(),
      deps.store.listOutbox(projectId, keptLimit),
      deps.store.listSmsOutbox(projectId, keptLimit),
      deps.auditLog.list(5),
      deps.hasRules(projectId),
    ]);
    const sample = deps.latestSample();
    const states = mails.map((mail) => mail.delivery?.state);
    const overview: Overview = {
      users: { total: users.total, newToday: users.createdSince, signInsByMethod: byMethod },
      documents: documents ?? null,
      storage: { storeBytes: deps.storeBytes(), fileBytes },
      now: sample ? { requestsPerSec: sample.requestsPerSec, errorsPerSec: sample.errorsPerSec, at: sample.at } : null,
      mail: {
        delivery: deps.mailSent ? 'smtp' : 'outbox',
        queued: states.filter((state) => state === 'queued').length,
        failed: states.filter((state) => state === 'failed').length,
        kept: states.filter((state) => state === 'kept').length,
      },
      sms: { delivery: deps.smsDelivery, kept: texts.length },
      recentAudit,
      warnings: [],
    };
    // A mistyped project id shows an empty project: say so rather than show zeros silently.
    if (!projects.some((project) => project.projectId === projectId) && users.total === 0 && documents === 0) {
      overview.warnings.unshift(`There is no project "${projectId}" on this server yet: nothing is stored under it. Check the Project box for a typo.`);
    }
    // Where mails and texts go (no SMTP server, no SMS provider) is `mail.delivery` and
    // `sms.delivery`, which the page words itself beside these: not repeated as warnings.
    if (!hasRules) overview.warnings.push(deps.dev ? 'No security rules released: the document database is open to every caller (dev mode).' : 'No security rules released: the document database is closed to all but the admin.');
    if (overview.mail.failed > 0) overview.warnings.push(`${overview.mail.failed} mail${overview.mail.failed === 1 ? '' : 's'} could not be delivered.`);
    if (sample && sample.errorsPerSec > 0) overview.warnings.push(`Requests are failing right now: ${sample.errorsPerSec} errors a second.`);
    for (const { what, publishedAt, signsFrom } of deps.keyHandovers(now)) {
      if (signsFrom - now > rotationWarningMs) continue;
      const published = publishedAt <= now ? 'is published' : `is published at ${new Date(publishedAt).toISOString()}`;
      overview.warnings.push(
        `${what} signing keys are about to rotate: a new key ${published} and signs from ${new Date(signsFrom).toISOString()}. Servers that verify with the published keys (firebase-admin does) need nothing; anything that pinned a certificate must take the new one before then.`,
      );
    }
    return overview;
  });
}
