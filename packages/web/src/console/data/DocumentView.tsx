import { useState } from 'react';
import { useNavigate } from 'react-router';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useAction, useLoad } from '../ui';
import { Collections, dataLink } from './DataPage';
import { deleteDocument, getDocument, saveDocument, segmentsOf } from './firestore-rest';
import { FieldsEditor } from './ValueEditor';
import { valueProblem, type FirestoreValue } from './values';

export function DocumentView({ databaseId, path }: { databaseId: string; path: string }) {
  const { projectId } = useConsole();
  const loaded = useLoad(() => getDocument(projectId, databaseId, path), `${projectId}|${databaseId}|${path}`);
  // Kept here: a save reloads the document, which starts a fresh editor.
  const [saved, setSaved] = useState(false);
  return (
    <div>
      {loaded.loading && !loaded.data && <Loading what="the document" />}
      <ErrorNote error={loaded.error} />
      {!loaded.loading && loaded.data === null && <Empty>No document at {path}. Add fields below and save to create it.</Empty>}
      {loaded.data !== undefined && (
        <DocumentEditor key={loaded.data?.updateTime ?? 'new'} databaseId={databaseId} path={path} initial={loaded.data?.fields ?? {}} exists={loaded.data !== null} updateTime={loaded.data?.updateTime} onSaved={() => { setSaved(true); loaded.reload(); }} onEdit={() => setSaved(false)} />
      )}
      {saved && <p role="status">Saved.</p>}
      <Collections databaseId={databaseId} documentPath={path} />
    </div>
  );
}

function DocumentEditor(props: { databaseId: string; path: string; initial: Record<string, FirestoreValue>; exists: boolean; updateTime?: string; onSaved: () => void; onEdit: () => void }) {
  const { projectId } = useConsole();
  const navigate = useNavigate();
  const [fields, setFields] = useState(props.initial);
  const [confirmingDelete, setConfirmingDelete] = useState(false);
  const action = useAction();
  const documentsRoot = `projects/${projectId}/databases/${props.databaseId}/documents`;
  const problem = Object.values(fields).map(valueProblem).find((found) => found !== null) ?? null;
  const changed = JSON.stringify(fields) !== JSON.stringify(props.initial);
  const segments = segmentsOf(props.path);
  return (
    <form
      className="console-panel"
      aria-label="Document"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await saveDocument(projectId, props.databaseId, props.path, fields, props.exists);
          props.onSaved();
        });
      }}
    >
      <h2>
        Document <code>{segments[segments.length - 1]}</code>
      </h2>
      {props.updateTime && <p className="console-muted">Last updated {new Date(props.updateTime).toLocaleString()}</p>}
      <FieldsEditor fields={fields} onChange={(next) => { setFields(next); props.onEdit(); }} documentsRoot={documentsRoot} />
      {problem && <p className="console-alert">{problem}</p>}
      <div className="console-row">
        <button type="submit" disabled={action.busy || problem !== null || (!changed && props.exists)}>
          {props.exists ? 'Save document' : 'Create document'}
        </button>
        {changed && (
          <button type="button" onClick={() => setFields(props.initial)}>
            Discard changes
          </button>
        )}
        {props.exists && (
          <button type="button" className="console-danger" onClick={() => setConfirmingDelete(true)}>
            Delete document
          </button>
        )}
      </div>
      {confirmingDelete && (
        <div role="alertdialog" aria-label="Confirm delete" className="console-confirm">
          <p>Delete {props.path}? Its subcollections stay.</p>
          <button
            type="button"
            className="console-danger"
            autoFocus
            onClick={() =>
              void action.run(async () => {
                await deleteDocument(projectId, props.databaseId, props.path);
                await navigate(dataLink(props.databaseId, segments.slice(0, -1).join('/')));
              })
            }
          >
            Yes, delete
          </button>
          <button type="button" onClick={() => setConfirmingDelete(false)}>
            Cancel
          </button>
        </div>
      )}
      <ErrorNote error={action.error} />
    </form>
  );
}
