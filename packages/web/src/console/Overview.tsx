import { useEffect } from 'react';
import { Link, NavLink } from 'react-router';
import { consoleRequest } from './api';
import { useConsole } from './ConsoleApp';
import { Delivery } from './Delivery';
import type { AuditEntry } from './metrics/AuditPage';
import { auditWords } from './metrics/audit-words';
import { ErrorNote, Loading, useLoad } from './ui';

interface OverviewAnswer {
  users: { total: number; newToday: number; signInsByMethod: Record<string, number> };
  /** null while the server counts them the first time (then it keeps the count as documents change). */
  documents: number | null;
  storage: { storeBytes: number; fileBytes: number };
  now: { requestsPerSec: number; errorsPerSec: number; at: number } | null;
  mail: { delivery: 'smtp' | 'outbox'; queued: number; failed: number; kept: number };
  sms: { delivery: string; kept: number };
  recentAudit: AuditEntry[];
  warnings: string[];
}

const methodNames: Record<string, string> = { password: 'Email and password', signUp: 'Sign-ups', idp: 'Identity providers', customToken: 'Custom tokens', emailLink: 'Email link', phone: 'Phone', anonymous: 'Anonymous' };
const count = new Intl.NumberFormat();

export function bytes(value: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let size = value;
  let unit = 0;
  while (size >= 1000 && unit < units.length - 1) {
    size /= 1000;
    unit++;
  }
  return `${unit === 0 ? size : size.toFixed(1)} ${units[unit]}`;
}

/** The console's home: what an operator opens every morning, from one counted answer of the server. */
export function Overview({ sections }: { sections: ReadonlyArray<{ to: string; label: string }> }) {
  const { session, projectId } = useConsole();
  const overview = useLoad(() => consoleRequest<OverviewAnswer>(`/hearth/v1/projects/${encodeURIComponent(projectId)}/overview`), projectId);
  const data = overview.data;
  // The first count of a large database runs in the background: ask again shortly rather than wait on it.
  const counting = data?.documents === null && !overview.loading;
  const { reload } = overview;
  useEffect(() => {
    if (!counting) return;
    const timer = setTimeout(reload, 2000);
    return () => clearTimeout(timer);
  }, [counting, reload]);
  const methods = data ? Object.entries(data.users.signInsByMethod).filter(([, n]) => n > 0) : [];
  return (
    <section>
      <h1>Overview</h1>
      <p>
        Signed in as <strong>{session.operator}</strong> until {new Date(session.expiresAt).toLocaleTimeString()}. Project <code>{projectId}</code>.{' '}
        <button type="button" onClick={overview.reload}>
          Refresh
        </button>
      </p>
      {overview.loading && !data && <Loading what="the overview" />}
      <ErrorNote error={overview.error} />
      {data && (
        <>
          {data.warnings.length > 0 && (
            <ul className="console-list" aria-label="Warnings" data-testid="warnings">
              {data.warnings.map((warning) => (
                <li key={warning} className="console-warning">
                  {warning}
                </li>
              ))}
            </ul>
          )}
          <ul className="console-cards console-stats" data-testid="overview">
            <li>
              <Link to="/console/users">
                <strong data-testid="users-total">{count.format(data.users.total)}</strong> users
                <small className="console-muted"> · {count.format(data.users.newToday)} new today (UTC)</small>
              </Link>
            </li>
            <li>
              <Link to="/console/data">
                {data.documents === null ? (
                  <strong data-testid="documents-counting">counting…</strong>
                ) : (
                  <strong data-testid="documents-total">{count.format(data.documents)}</strong>
                )}{' '}
                documents
              </Link>
            </li>
            <li>
              <Link to="/console/files">
                <strong>{bytes(data.storage.fileBytes)}</strong> of files
                <small className="console-muted"> · database {bytes(data.storage.storeBytes)}</small>
              </Link>
            </li>
            <li>
              <Link to="/console/metrics">
                {data.now ? (
                  <>
                    <strong data-testid="requests-now">{data.now.requestsPerSec}</strong> requests/s
                    <small className={data.now.errorsPerSec > 0 ? 'console-warning' : 'console-muted'}> · {data.now.errorsPerSec} errors/s</small>
                  </>
                ) : (
                  'Requests: measured in a few seconds'
                )}
              </Link>
            </li>
            <li>
              <Link to="/console/outbox">
                Mail: <strong>{data.mail.queued}</strong> queued, {data.mail.failed} failed, {data.mail.kept} kept
                <small className="console-muted"> · texts kept: {data.sms.kept}</small>
              </Link>
            </li>
          </ul>
          <Delivery mail={data.mail.delivery} texts={data.sms.delivery} />
          <h2>Sign-ins by method</h2>
          <p className="console-hint">Successful sign-ins and sign-ups since the server started.</p>
          {methods.length === 0 ? (
            <p className="console-muted">None yet.</p>
          ) : (
            <ul className="console-list" data-testid="sign-ins-by-method">
              {methods.map(([method, n]) => (
                <li key={method}>
                  {methodNames[method] ?? method}: <strong>{count.format(n)}</strong>
                </li>
              ))}
            </ul>
          )}
          <h2>Recent changes</h2>
          {data.recentAudit.length === 0 ? (
            <p className="console-muted">No changes made through the console or the admin API yet.</p>
          ) : (
            <ul className="console-list" data-testid="recent-audit">
              {data.recentAudit.map((entry) => (
                <li key={entry.id}>
                  <time dateTime={new Date(entry.at).toISOString()}>{new Date(entry.at).toLocaleString()}</time> · {entry.operator} · {auditWords(entry).text}
                </li>
              ))}
              <li>
                <Link to="/console/audit">The whole audit log</Link>
              </li>
            </ul>
          )}
        </>
      )}
      <h2>Sections</h2>
      <ul className="console-cards">
        {sections.map((section) => (
          <li key={section.to}>
            <NavLink to={`/console/${section.to}`}>{section.label}</NavLink>
          </li>
        ))}
      </ul>
    </section>
  );
}
