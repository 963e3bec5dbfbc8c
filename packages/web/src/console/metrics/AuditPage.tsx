import { useState } from 'react';
import { consolePath, consoleRequest, download } from '../api';
import { Empty, ErrorNote, Loading, useAction, useLoad } from '../ui';

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
  const page = useLoad(() => consoleRequest<{ entries: AuditEntry[]; nextPageToken?: string }>(consolePath(`audit?pageSize=50${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)), token ?? '');
  const exporting = useAction();
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
      <ErrorNote error={exporting.error} />
      {page.loading && <Loading what="the audit log" />}
      <ErrorNote error={page.error} />
      {page.data && !page.loading && page.data.entries.length === 0 && <Empty>Nothing recorded yet. Changes made in the console appear here.</Empty>}
      {page.data && !page.loading && page.data.entries.length > 0 && (
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
              {page.data.entries.map((entry) => (
                <tr key={entry.id} data-testid="audit-entry">
                  <td>{new Date(entry.at).toLocaleString()}</td>
                  <td>{entry.operator}</td>
                  <td>
                    {entry.summary}
                    <div className="console-muted">
                      <code>
                        {entry.method} {entry.path}
                      </code>
                    </div>
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
