import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { download } from '../api';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, formatTime, useAction, useLoad } from '../ui';
import { countAccounts, createAccount, exportAccounts, importAccounts, providerName, providersOf, queryAccounts, type SearchField } from './accounts';

const pageSize = 25;
const fieldLabels: Record<SearchField, string> = { email: 'Email', phoneNumber: 'Phone', userId: 'User ID', provider: 'Provider' };

export function UsersPage() {
  const { projectId } = useConsole();
  const [params, setParams] = useSearchParams();
  const field = (params.get('by') as SearchField | null) ?? 'email';
  const term = params.get('q') ?? '';
  const offset = Number(params.get('offset') ?? 0) || 0;
  const [draftField, setDraftField] = useState<SearchField>(field);
  const [draftTerm, setDraftTerm] = useState(term);
  const page = useLoad(() => queryAccounts(projectId, field, term, offset, pageSize), `${projectId}|${field}|${term}|${offset}`);
  // The count scans every account and holds the server meanwhile, so it is asked once the page is in.
  const pageIn = page.data !== undefined;
  const count = useLoad(() => (pageIn ? countAccounts(projectId) : new Promise<number>(() => undefined)), `${projectId}|${pageIn}`);

  function search(event: FormEvent) {
    event.preventDefault();
    setParams(draftTerm.trim() ? { by: draftField, q: draftTerm.trim() } : {});
  }
  const goTo = (nextOffset: number) => setParams({ ...(term ? { by: field, q: term } : {}), ...(nextOffset ? { offset: String(nextOffset) } : {}) });

  return (
    <section>
      <h1>Users</h1>
      <form className="console-row" role="search" onSubmit={search}>
        <label>
          Search by{' '}
          <select value={draftField} onChange={(event) => setDraftField(event.target.value as SearchField)}>
            {Object.entries(fieldLabels).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <input aria-label="Search users" type="search" placeholder={draftField === 'phoneNumber' ? '+15555550100' : draftField === 'provider' ? 'google.com' : ''} value={draftTerm} onChange={(event) => setDraftTerm(event.target.value)} />
        <button type="submit">Search</button>
        {term && (
          <button type="button" onClick={() => { setDraftTerm(''); setParams({}); }}>
            Clear
          </button>
        )}
      </form>
      {page.loading && <Loading what="users" />}
      <ErrorNote error={page.error} />
      {page.data && !page.loading && (
        page.data.users.length === 0 ? (
          <Empty>{term ? `No user has ${fieldLabels[field].toLowerCase()} “${term}”. Email, phone and user ID must match exactly.` : 'No users yet. Create one below or import a Firebase export.'}</Empty>
        ) : (
          <>
            <div className="console-scroll">
              <table className="console-table" data-testid="users-table">
                <thead>
                  <tr>
                    <th>Identifier</th>
                    <th>Providers</th>
                    <th>Created</th>
                    <th>Last sign-in</th>
                    <th>User ID</th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.users.map((user) => (
                    <tr key={user.localId} className={user.disabled ? 'console-disabled' : undefined}>
                      <td>
                        <Link to={`/console/users/${encodeURIComponent(user.localId)}`}>{user.email ?? user.phoneNumber ?? '(anonymous)'}</Link>
                        {user.disabled && <span className="console-badge">disabled</span>}
                      </td>
                      <td>{providersOf(user).map(providerName).join(', ')}</td>
                      <td>{formatTime(user.createdAt)}</td>
                      <td>{formatTime(user.lastLoginAt)}</td>
                      <td>
                        <code>{user.localId}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <nav className="console-row" aria-label="Pages">
              <button type="button" disabled={offset === 0} onClick={() => goTo(Math.max(0, offset - pageSize))}>
                Previous
              </button>
              <span>
                {offset + 1}–{offset + page.data.users.length}
                {term && field !== 'provider' ? ` of ${page.data.total}` : !term && count.data !== undefined ? ` of ${count.data}` : ''}
              </span>
              <button type="button" disabled={page.data.nextOffset === undefined} onClick={() => page.data?.nextOffset !== undefined && goTo(page.data.nextOffset)}>
                Next
              </button>
            </nav>
          </>
        )
      )}
      <CreateUser onCreated={() => { page.reload(); count.reload(); }} />
      <ImportExport onImported={() => { page.reload(); count.reload(); }} />
    </section>
  );
}

function CreateUser({ onCreated }: { onCreated: () => void }) {
  const { projectId } = useConsole();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [phoneNumber, setPhoneNumber] = useState('');
  const action = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    await action.run(async () => {
      const created = await createAccount(projectId, { ...(email ? { email } : {}), ...(password ? { password } : {}), ...(phoneNumber ? { phoneNumber } : {}) });
      onCreated();
      await navigate(`/console/users/${encodeURIComponent(created.localId)}`);
    });
  }
  return (
    <details className="console-panel">
      <summary>Create a user</summary>
      <form className="console-form" onSubmit={(event) => void submit(event)}>
        <label>
          Email <input type="email" value={email} onChange={(event) => setEmail(event.target.value)} />
        </label>
        <label>
          Password <input type="password" autoComplete="new-password" minLength={6} value={password} onChange={(event) => setPassword(event.target.value)} />
        </label>
        <label>
          Phone <input type="tel" placeholder="+15555550100" value={phoneNumber} onChange={(event) => setPhoneNumber(event.target.value)} />
        </label>
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy}>
          Create user
        </button>
      </form>
    </details>
  );
}

function ImportExport({ onImported }: { onImported: () => void }) {
  const { projectId } = useConsole();
  const exporting = useAction();
  const importing = useAction();
  const [result, setResult] = useState<string | null>(null);
  const [algorithm, setAlgorithm] = useState('');
  const [signerKey, setSignerKey] = useState('');
  const [saltSeparator, setSaltSeparator] = useState('');
  const [rounds, setRounds] = useState('8');
  const [memoryCost, setMemoryCost] = useState('14');

  async function onFile(file: File) {
    setResult(null);
    await importing.run(async () => {
      const hash = algorithm
        ? { hashAlgorithm: algorithm, ...(signerKey ? { signerKey } : {}), ...(saltSeparator ? { saltSeparator } : {}), rounds: Number(rounds), memoryCost: Number(memoryCost) }
        : null;
      const outcome = await importAccounts(projectId, await file.text(), hash);
      setResult(`Imported ${outcome.imported} account(s).${outcome.errors.length ? ` ${outcome.errors.length} failed: ${outcome.errors.slice(0, 5).join('; ')}` : ''}`);
      onImported();
    });
  }
  return (
    <details className="console-panel">
      <summary>Import and export</summary>
      <p>
        <button type="button" disabled={exporting.busy} onClick={() => void exporting.run(async () => download(`${projectId}-users.json`, JSON.stringify(await exportAccounts(projectId), null, 2), 'application/json'))}>
          {exporting.busy ? 'Exporting…' : 'Export all users (JSON)'}
        </button>
      </p>
      <ErrorNote error={exporting.error} />
      <div className="console-form">
        <label>
          Password hash algorithm (only for exports with hashes)
          <select value={algorithm} onChange={(event) => setAlgorithm(event.target.value)}>
            <option value="">None</option>
            <option value="SCRYPT">SCRYPT (Firebase)</option>
            <option value="STANDARD_SCRYPT">STANDARD_SCRYPT</option>
            <option value="BCRYPT">BCRYPT</option>
            <option value="PBKDF2_SHA256">PBKDF2_SHA256</option>
            <option value="HMAC_SHA256">HMAC_SHA256</option>
            <option value="SHA256">SHA256</option>
          </select>
        </label>
        {algorithm && (
          <>
            <label>
              Signer key (base64) <input value={signerKey} onChange={(event) => setSignerKey(event.target.value)} />
            </label>
            <label>
              Salt separator (base64) <input value={saltSeparator} onChange={(event) => setSaltSeparator(event.target.value)} />
            </label>
            <label>
              Rounds <input type="number" value={rounds} onChange={(event) => setRounds(event.target.value)} />
            </label>
            <label>
              Memory cost <input type="number" value={memoryCost} onChange={(event) => setMemoryCost(event.target.value)} />
            </label>
          </>
        )}
        <label>
          Import a Firebase CLI export (JSON)
          <input type="file" accept="application/json,.json" disabled={importing.busy} onChange={(event) => { const file = event.target.files?.[0]; if (file) void onFile(file); event.target.value = ''; }} />
        </label>
      </div>
      {importing.busy && <Loading what="the import" />}
      <ErrorNote error={importing.error} />
      {result && <p role="status">{result}</p>}
    </details>
  );
}
