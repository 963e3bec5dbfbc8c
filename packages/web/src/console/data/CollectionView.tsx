import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useAction, useLoad } from '../ui';
import { dataLink } from './DataPage';
import { createDocument, listDocuments, relativePath, type RestDocument } from './firestore-rest';
import { LiveView } from './LiveView';
import { QueryRunner } from './QueryRunner';
import { summary } from './values';

const pageSize = 25;

export function CollectionView({ databaseId, path }: { databaseId: string; path: string }) {
  const { projectId } = useConsole();
  // Page tokens seen so far, so Previous goes back without the server keeping anything.
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  // 'auto': a collection with no documents of its own is listed again with the ids that only hold
  // subcollections (users/{uid} holding notes), as Firebase's console shows them; the full listing
  // reads the whole collection, so it is not the default for collections with documents.
  const [showMissing, setShowMissing] = useState<boolean | 'auto'>('auto');
  const token = tokens[tokens.length - 1];
  const page = useLoad(async () => {
    const listed = await listDocuments(projectId, databaseId, path, pageSize, token, showMissing === true);
    if (showMissing !== 'auto' || token !== undefined || listed.documents?.length) return { ...listed, withMissing: showMissing === true };
    return { ...(await listDocuments(projectId, databaseId, path, pageSize, token, true)), withMissing: true };
  }, `${projectId}|${databaseId}|${path}|${token ?? ''}|${showMissing}`);
  const navigate = useNavigate();
  const [openId, setOpenId] = useState('');
  const [tab, setTab] = useState<'documents' | 'query' | 'live'>('documents');
  return (
    <div>
      <h2>
        Collection <code>{path}</code>
      </h2>
      <div role="tablist" className="console-tabs">
        {(['documents', 'query', 'live'] as const).map((name) => (
          <button key={name} role="tab" type="button" aria-selected={tab === name} onClick={() => setTab(name)}>
            {name === 'documents' ? 'Documents' : name === 'query' ? 'Query' : 'Live view'}
          </button>
        ))}
      </div>
      {tab === 'documents' && (
        <>
          <div className="console-row">
            <label>
              <input type="checkbox" checked={showMissing === true || (showMissing === 'auto' && page.data?.withMissing === true)} onChange={(event) => { setShowMissing(event.target.checked); setTokens([undefined]); }} /> Include documents that only hold subcollections (slower on big collections)
            </label>
          </div>
          <form className="console-row" onSubmit={(event) => { event.preventDefault(); const id = openId.trim(); if (id && !id.includes('/')) void navigate(dataLink(databaseId, `${path}/${id}`)); }}>
            <input aria-label="Document ID to open" placeholder="document id" value={openId} onChange={(event) => setOpenId(event.target.value)} />
            <button type="submit" disabled={!openId.trim() || openId.includes('/')}>
              Open document
            </button>
          </form>
          {page.loading && <Loading what="documents" />}
          <ErrorNote error={page.error} />
          {page.data && !page.loading && ((page.data.documents ?? []).length === 0 ? <Empty>No documents here yet. Add one below.</Empty> : <DocumentList databaseId={databaseId} documents={page.data.documents ?? []} />)}
          <nav className="console-row" aria-label="Pages">
            <button type="button" disabled={tokens.length === 1} onClick={() => setTokens(tokens.slice(0, -1))}>
              Previous
            </button>
            <button type="button" disabled={!page.data?.nextPageToken} onClick={() => page.data?.nextPageToken && setTokens([...tokens, page.data.nextPageToken])}>
              Next
            </button>
          </nav>
          <AddDocument databaseId={databaseId} path={path} />
        </>
      )}
      {tab === 'query' && <QueryRunner databaseId={databaseId} collectionPath={path} />}
      {tab === 'live' && <LiveView databaseId={databaseId} collectionPath={path} />}
    </div>
  );
}

export function DocumentList({ databaseId, documents }: { databaseId: string; documents: RestDocument[] }) {
  return (
    <ul className="console-list" data-testid="documents">
      {documents.map((document) => {
        const path = relativePath(document.name);
        const fields = Object.entries(document.fields ?? {});
        return (
          <li key={document.name}>
            <Link to={dataLink(databaseId, path)}>{path.split('/').pop()}</Link>{' '}
            {!document.createTime && <span className="console-muted">(no fields; holds subcollections) </span>}
            <span className="console-muted">
              {fields
                .slice(0, 4)
                .map(([name, value]) => `${name}: ${summary(value)}`)
                .join(', ')}
              {fields.length > 4 ? ', …' : ''}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

function AddDocument({ databaseId, path }: { databaseId: string; path: string }) {
  const { projectId } = useConsole();
  const navigate = useNavigate();
  const [documentId, setDocumentId] = useState('');
  const action = useAction();
  return (
    <form
      className="console-row"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const created = await createDocument(projectId, databaseId, path, documentId.trim(), {});
          await navigate(dataLink(databaseId, relativePath(created.name)));
        });
      }}
    >
      <input aria-label="New document ID" placeholder="document id (empty: automatic)" value={documentId} onChange={(event) => setDocumentId(event.target.value)} />
      <button type="submit" disabled={action.busy || documentId.includes('/')}>
        Add document
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
