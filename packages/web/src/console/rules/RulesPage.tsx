import { useEffect, useState } from 'react';
import { NavLink } from 'react-router';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useAction, useLoad } from '../ui';
import { Playground } from './Playground';
import { IssueList, RulesEditor } from './RulesEditor';
import { StoragePlayground } from './StoragePlayground';
import { checkRules, checkStorageRules, currentRelease, deploy, getRuleset, listRulesetsOf, release, rulesSourceOf, type RulesIssue, type RulesKind } from './rules-api';

const starters: Record<RulesKind, string> = {
  firestore: `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    match /{document=**} {
      allow read, write: if false;
    }
  }
}
`,
  storage: `rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{allPaths=**} {
      allow read, write: if false;
    }
  }
}
`,
};

/** The rules of the document database or of Cloud Storage: edited with checks as one types, deployed, tried, rolled back. */
export function RulesPage({ kind = 'firestore' }: { kind?: RulesKind }) {
  const { projectId } = useConsole();
  const starter = starters[kind];
  const released = useLoad(async () => {
    const current = await currentRelease(projectId, kind);
    const ruleset = current ? await getRuleset(projectId, current.rulesetName) : null;
    return { current, source: ruleset ? rulesSourceOf(ruleset, kind) : null };
  }, `${kind}/${projectId}`);
  const history = useLoad(() => listRulesetsOf(projectId, kind), `${kind}/${projectId}`);
  const [source, setSource] = useState<string | null>(null);
  const [issues, setIssues] = useState<RulesIssue[]>([]);
  const [checkedSource, setCheckedSource] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const checking = useAction();
  const deploying = useAction();

  useEffect(() => {
    if (released.data && source === null) setSource(released.data.source ?? starter);
  }, [released.data, source]);

  // Checks the text a moment after typing stops, so errors appear at their lines as one types.
  useEffect(() => {
    if (source === null) return;
    const timer = setTimeout(() => {
      void checking.run(async () => {
        const found = kind === 'storage' ? await checkStorageRules(projectId, source) : await checkRules(projectId, '(default)', source);
        setIssues(found);
        setCheckedSource(source);
      });
    }, 400);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [source, projectId]);

  const errors = issues.filter((issue) => issue.severity !== 'WARNING');
  const upToDate = checkedSource === source;

  return (
    <section>
      <h1>Rules</h1>
      <nav className="console-tabs" aria-label="Rules of">
        <NavLink to="/console/rules" end>
          Firestore
        </NavLink>
        <NavLink to="/console/rules/storage">Storage</NavLink>
      </nav>
      {released.loading && <Loading what="the released rules" />}
      <ErrorNote error={released.error} />
      {released.data && (
        <p className="console-muted">
          {released.data.current ? `Released: ${released.data.current.rulesetName.split('/').pop()} (${new Date(released.data.current.updateTime).toLocaleString()}).` : 'No rules released yet: every client request is denied. Deploy rules to open access.'}
        </p>
      )}
      {source !== null && (
        <>
          <RulesEditor label="Rules source" value={source} onChange={(next) => { setSource(next); setNotice(null); }} issues={upToDate ? issues : []} />
          <p role="status" className="console-muted" data-testid="rules-status">
            {!upToDate ? 'Checking…' : errors.length ? `${errors.length} error${errors.length === 1 ? ': fix it' : 's: fix them'} before deploying.` : 'No errors.'}
          </p>
          {upToDate && <IssueList issues={issues} />}
          <ErrorNote error={checking.error} />
          <div className="console-row">
            <button
              type="button"
              disabled={deploying.busy || !upToDate || errors.length > 0}
              onClick={() =>
                void deploying.run(async () => {
                  const ruleset = await deploy(projectId, source, kind);
                  setNotice(`Deployed ${ruleset.name.split('/').pop()}.`);
                  released.reload();
                  history.reload();
                })
              }
            >
              {deploying.busy ? 'Deploying…' : 'Deploy'}
            </button>
            {released.data?.source != null && source !== released.data.source && (
              <button type="button" onClick={() => setSource(released.data?.source ?? starter)}>
                Revert to released
              </button>
            )}
          </div>
          <ErrorNote error={deploying.error} />
          {notice && <p role="status">{notice}</p>}
          {kind === 'storage' ? <StoragePlayground source={source} /> : <Playground source={source} />}
        </>
      )}
      <h2>History</h2>
      {history.loading && <Loading what="the history" />}
      <ErrorNote error={history.error} />
      {history.data && history.data.length === 0 && <Empty>No rulesets yet.</Empty>}
      {history.data && history.data.length > 0 && (
        <ol className="console-list" data-testid="rules-history">
          {history.data.map((ruleset) => {
            const isCurrent = released.data?.current?.rulesetName === ruleset.name;
            return (
              <li key={ruleset.name}>
                <code>{ruleset.name.split('/').pop()}</code> {new Date(ruleset.createTime).toLocaleString()} {isCurrent && <span className="console-badge console-ok">released</span>}{' '}
                <button type="button" onClick={() => void deploying.run(async () => setSource(rulesSourceOf(await getRuleset(projectId, ruleset.name), kind)))}>
                  Open
                </button>{' '}
                {!isCurrent && (
                  <button
                    type="button"
                    onClick={() =>
                      void deploying.run(async () => {
                        await release(projectId, ruleset.name, kind);
                        setNotice(`Rolled back to ${ruleset.name.split('/').pop()}.`);
                        released.reload();
                      })
                    }
                  >
                    Release this one
                  </button>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
