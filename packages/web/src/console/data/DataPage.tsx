import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useLoad } from '../ui';
import { DocumentView } from './DocumentView';
import { CollectionView } from './CollectionView';
import { IndexesPanel } from './IndexesPanel';
import { isDocumentPath, listCollectionIds, segmentsOf } from './firestore-rest';

/** Where the operator is: `?db=(default)&path=users/u1/notes`. */
export function dataLink(databaseId: string, path: string): string {
  const params = new URLSearchParams({ db: databaseId, ...(path ? { path } : {}) });
  return `/console/data?${params}`;
}

export function DataPage() {
  const { projectId } = useConsole();
  const [params, setParams] = useSearchParams();
  const databaseId = params.get('db') || '(default)';
  const path = segmentsOf(params.get('path') ?? '').join('/');
  const [databaseDraft, setDatabaseDraft] = useState(databaseId);
  const segments = segmentsOf(path);
  return (
    <section>
      <h1>Data</h1>
      <form className="console-row" onSubmit={(event) => { event.preventDefault(); setParams({ db: databaseDraft.trim() || '(default)' }); }}>
        <label>
          Database <input aria-label="Database" value={databaseDraft} onChange={(event) => setDatabaseDraft(event.target.value)} size={14} />
        </label>
        <button type="submit">Open</button>
      </form>
      <nav aria-label="Path" className="console-breadcrumbs">
        <Link to={dataLink(databaseId, '')}>
          {projectId} / {databaseId}
        </Link>
        {segments.map((segment, index) => (
          <span key={index}>
            {' / '}
            <Link to={dataLink(databaseId, segments.slice(0, index + 1).join('/'))}>{segment}</Link>
          </span>
        ))}
      </nav>
      {isDocumentPath(path) ? (
        <DocumentView key={`${databaseId}|${path}`} databaseId={databaseId} path={path} />
      ) : path ? (
        <CollectionView key={`${databaseId}|${path}`} databaseId={databaseId} path={path} />
      ) : (
        <>
          <Collections databaseId={databaseId} documentPath="" />
          <IndexesPanel databaseId={databaseId} />
        </>
      )}
    </section>
  );
}

/** The collections under the database's root or under one document. */
export function Collections({ databaseId, documentPath }: { databaseId: string; documentPath: string }) {
  const { projectId } = useConsole();
  const ids = useLoad(() => listCollectionIds(projectId, databaseId, documentPath), `${projectId}|${databaseId}|${documentPath}`);
  const [newCollection, setNewCollection] = useState('');
  const [params, setParams] = useSearchParams();
  return (
    <div>
      <h2>{documentPath ? 'Subcollections' : 'Collections'}</h2>
      {ids.loading && <Loading what="collections" />}
      <ErrorNote error={ids.error} />
      {ids.data && ids.data.length === 0 && <Empty>{documentPath ? 'No subcollections.' : 'This database has no documents yet. Start a collection below.'}</Empty>}
      {ids.data && ids.data.length > 0 && (
        <ul className="console-list" data-testid="collections">
          {ids.data.map((id) => (
            <li key={id}>
              <Link to={dataLink(databaseId, documentPath ? `${documentPath}/${id}` : id)}>{id}</Link>
            </li>
          ))}
        </ul>
      )}
      <form className="console-row" onSubmit={(event) => { event.preventDefault(); const id = newCollection.trim(); if (id && !id.includes('/')) setParams({ ...Object.fromEntries(params), path: documentPath ? `${documentPath}/${id}` : id }); }}>
        <input aria-label="Collection ID" placeholder="collection id" value={newCollection} onChange={(event) => setNewCollection(event.target.value)} />
        <button type="submit" disabled={!newCollection.trim() || newCollection.includes('/')}>
          Open collection
        </button>
      </form>
    </div>
  );
}
