import { useMemo, useState } from 'react';
import { consolePath, consoleRequest, download } from '../api';
import { Empty, ErrorNote, Loading, useAction, useLoad } from '../ui';
import { auditActions, auditWords } from './audit-words';

const pageSize = 1000;

export interface AuditEntry {
  id: string;
  at: number;
  operator: string;
  address: string;
  userAgent: string;
  method: string;
  path: string;
  status: number;
  summary: string;
}

export function AuditPage() {
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const token = tokens[tokens.length - 1];
  const page = useLoad(() => consoleRequest<{ entries: AuditEntry[]; nextPageToken?: string }>(consolePath(`audit?pageSize=${pageSize}${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)), token ?? '');
  const exporting = useAction();
  const [operator, setOperator] = useState('');
  const [action, setAction] = useState('');
  const [since, setSince] = useState('');
  const described = useMemo(() => (page.data?.entries ?? []).map((entry) => ({ entry, words: auditWords(entry) })), [page.data]);
  const operators = useMemo(() => [...new Set(described.map(({ entry }) => entry.operator))].sort(), [described]);
  const sinceMs = since ? new Date(since).getTime() : NaN;
  const shown = described.filter(({ entry, words }) => (!operator || entry.operator === operator) && (!action || words.action === action) && (Number.isNaN(sinceMs) || entry.at >= sinceMs));
  return (
    <section>
      <h1>Audit log</h1>
      <p className="console-muted">Every change made with a console session: who, what, when and from where. Newest first.</p>
      <div className="console-row">
        <button type="button" onClick={page.reload}>
          Refresh
        </button>
        <button type="button" disabled={exporting.busy} onClick={() => void exporting.run(async () => download('hearth-audit.ndjson', await consoleRequest<string>(consolePath('audit:export'), { text: true }), 'application/x-ndjson'))}>
          Export (NDJSON)
        </button>
      </div>
      <div className="console-row" role="group" aria-label="Filters">
        <label>
          Operator{' '}
          <select value={operator} onChange={(event) => setOperator(event.target.value)}>
            <option value="">Anyone</option>
            {operators.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Action{' '}
          <select value={action} onChange={(event) => setAction(event.target.value)}>
            <option value="">Any</option>
            {auditActions.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Since <input type="datetime-local" value={since} onChange={(event) => setSince(event.target.value)} />
        </label>
      </div>
      <p className="console-hint">The filters apply to the newest {pageSize.toLocaleString()} entries of this page; Older goes further back.</p>
      <ErrorNote error={exporting.error} />
      {page.loading && <Loading what="the audit log" />}
      <ErrorNote error={page.error} />
      {page.data && !page.loading && page.data.entries.length === 0 && <Empty>Nothing recorded yet. Changes made in the console appear here.</Empty>}
      {page.data && !page.loading && page.data.entries.length > 0 && shown.length === 0 && <Empty>No entry matches these filters.</Empty>}
      {page.data && !page.loading && shown.length > 0 && (
        <div className="console-scroll">
          <table className="console-table" data-testid="audit-table">
            <thead>
              <tr>
                <th>When</th>
                <th>Operator</th>
                <th>What</th>
                <th>Status</th>
                <th>From</th>
              </tr>
            </thead>
            <tbody>
              {shown.map(({ entry, words }) => (
                <tr key={entry.id} data-testid="audit-entry" data-action={words.action}>
                  <td>{new Date(entry.at).toLocaleString()}</td>
                  <td>{entry.operator}</td>
                  <td>
                    <span data-testid="audit-words">{words.text}</span>
                    <details className="console-muted">
                      <summary>Request</summary>
                      <code>{entry.summary}</code>
                    </details>
                  </td>
                  <td className={entry.status >= 400 ? 'console-error' : undefined}>{entry.status}</td>
                  <td title={entry.userAgent}>{entry.address}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className="console-row" aria-label="Pages">
        <button type="button" disabled={tokens.length === 1} onClick={() => setTokens(tokens.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!page.data?.nextPageToken} onClick={() => page.data?.nextPageToken && setTokens([...tokens, page.data.nextPageToken])}>
          Older
        </button>
      </nav>
    </section>
  );
}
