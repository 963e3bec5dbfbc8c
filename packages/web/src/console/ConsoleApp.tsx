import { Overview } from './Overview';
import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import { NavLink, Route, Routes } from 'react-router';
import { currentSession, endSession, onSignedOut, type ConsoleSession } from './api';
import { consoleFirebase, type ConsoleFirebase } from './console-firebase';
import { SignInScreen } from './SignInScreen';
import { ErrorNote, Loading } from './ui';
import { UsersPage } from './users/UsersPage';
import { UserPage } from './users/UserPage';
import { DataPage } from './data/DataPage';
import { RulesPage } from './rules/RulesPage';
import { FilesPage } from './files/FilesPage';
import { SettingsPage } from './settings/SettingsPage';
import { OutboxPage } from './settings/OutboxPage';
import { MetricsPage } from './metrics/MetricsPage';
import { AuditPage } from './metrics/AuditPage';
import './console.css';

export interface ConsoleContextValue {
  firebase: ConsoleFirebase;
  session: ConsoleSession;
  /** The project the admin calls address (the server's default until the operator picks another). */
  projectId: string;
  setProjectId: (projectId: string) => void;
}

const ConsoleContext = createContext<ConsoleContextValue | null>(null);

export function useConsole(): ConsoleContextValue {
  const value = useContext(ConsoleContext);
  if (!value) throw new Error('useConsole outside the console');
  return value;
}

type Gate = { kind: 'loading' } | { kind: 'failed'; error: unknown } | { kind: 'signedOut'; firebase: ConsoleFirebase; expired: boolean } | { kind: 'signedIn'; firebase: ConsoleFirebase; session: ConsoleSession };

export default function ConsoleApp() {
  const [gate, setGate] = useState<Gate>({ kind: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let current = true;
    Promise.all([consoleFirebase(), currentSession()]).then(
      ([firebase, session]) => current && setGate(session ? { kind: 'signedIn', firebase, session } : { kind: 'signedOut', firebase, expired: false }),
      (error: unknown) => current && setGate({ kind: 'failed', error }),
    );
    return () => {
      current = false;
    };
  }, [attempt]);

  // A request that finds the session gone (or the clock passing its end) brings back the sign-in screen.
  useEffect(
    () =>
      onSignedOut(() =>
        setGate((previous) => (previous.kind === 'signedIn' ? { kind: 'signedOut', firebase: previous.firebase, expired: true } : previous)),
      ),
    [],
  );
  const expiresAt = gate.kind === 'signedIn' ? gate.session.expiresAt : undefined;
  useEffect(() => {
    if (expiresAt === undefined) return;
    const timer = setTimeout(
      () => setGate((previous) => (previous.kind === 'signedIn' ? { kind: 'signedOut', firebase: previous.firebase, expired: true } : previous)),
      Math.max(0, Math.min(expiresAt - Date.now(), 2 ** 31 - 1)),
    );
    return () => clearTimeout(timer);
  }, [expiresAt]);

  if (gate.kind === 'loading') return <div className="console"><Loading what="the console" /></div>;
  if (gate.kind === 'failed')
    return (
      <div className="console console-center">
        <ErrorNote error={gate.error} />
        <button type="button" onClick={() => setAttempt((n) => n + 1)}>
          Try again
        </button>
      </div>
    );
  if (gate.kind === 'signedOut')
    return (
      <div className="console console-center">
        <SignInScreen firebase={gate.firebase} expired={gate.expired} onSignedIn={(session) => setGate({ kind: 'signedIn', firebase: gate.firebase, session })} />
      </div>
    );
  return <SignedInConsole firebase={gate.firebase} session={gate.session} onSignedOut={() => setGate({ kind: 'signedOut', firebase: gate.firebase, expired: false })} />;
}

const sections: { to: string; label: string }[] = [
  { to: 'users', label: 'Users' },
  { to: 'data', label: 'Data' },
  { to: 'files', label: 'Files' },
  { to: 'rules', label: 'Rules' },
  { to: 'settings', label: 'Sign-in' },
  { to: 'outbox', label: 'Outbox' },
  { to: 'metrics', label: 'Metrics' },
  { to: 'audit', label: 'Audit log' },
];

function SignedInConsole({ firebase, session, onSignedOut }: { firebase: ConsoleFirebase; session: ConsoleSession; onSignedOut: () => void }) {
  const [projectId, setProjectIdState] = useState(firebase.projectId);
  const [error, setError] = useState<unknown>(null);
  const setProjectId = useCallback((next: string) => setProjectIdState(next.trim() || firebase.projectId), [firebase.projectId]);
  async function signOut() {
    setError(null);
    try {
      await endSession();
      onSignedOut();
    } catch (caught) {
      setError(caught);
    }
  }
  return (
    <ConsoleContext.Provider value={{ firebase, session, projectId, setProjectId }}>
      <div className="console">
        <header className="console-header">
          <NavLink to="/console" end className="console-brand">
            Hearth console
          </NavLink>
          <nav aria-label="Console">
            {sections.map((section) => (
              <NavLink key={section.to} to={`/console/${section.to}`}>
                {section.label}
              </NavLink>
            ))}
          </nav>
          <div className="console-who">
            <ProjectBox projectId={projectId} onOpen={setProjectId} />
            <span data-testid="console-operator">{session.operator}</span>
            <button type="button" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </header>
        <ErrorNote error={error} />
        <main className="console-main">
          <Routes>
            <Route index element={<Overview sections={sections} />} />
            <Route path="users" element={<UsersPage />} />
            <Route path="users/:uid" element={<UserPage />} />
            <Route path="data/*" element={<DataPage />} />
            <Route path="files" element={<FilesPage />} />
            <Route path="rules" element={<RulesPage key="firestore" />} />
            <Route path="rules/storage" element={<RulesPage key="storage" kind="storage" />} />
            <Route path="settings" element={<SettingsPage />} />
            <Route path="outbox" element={<OutboxPage />} />
            <Route path="metrics" element={<MetricsPage />} />
            <Route path="audit" element={<AuditPage />} />
            <Route path="*" element={<p>There is no such console page. Pick a section above.</p>} />
          </Routes>
        </main>
      </div>
    </ConsoleContext.Provider>
  );
}

/** The project the console shows: typed, then opened with Enter or Open (never applied half-typed on blur). */
function ProjectBox({ projectId, onOpen }: { projectId: string; onOpen: (next: string) => void }) {
  const [draft, setDraft] = useState(projectId);
  useEffect(() => setDraft(projectId), [projectId]);
  const changed = draft.trim() !== projectId;
  return (
    <form
      className="console-project"
      onSubmit={(event) => {
        event.preventDefault();
        onOpen(draft);
      }}
    >
      <label>
        Project <input aria-label="Project" size={14} value={draft} onChange={(event) => setDraft(event.target.value)} />
      </label>{' '}
      <button type="submit" disabled={!changed}>
        Open
      </button>
    </form>
  );
}
