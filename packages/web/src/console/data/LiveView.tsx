import { collection, limit, onSnapshot, query, type DocumentData } from 'firebase/firestore';
import { useEffect, useState } from 'react';
import { firestoreOf } from '../../notes/firestore';

import { useConsole } from '../ConsoleApp';
import { describeError, Empty, Loading } from '../ui';

/** The console's own WebChannel (the server's console/console-access.ts). */
const consoleChannelPrefix = '/hearth/v1/console/firestore';

interface LiveDocument {
  id: string;
  data: DocumentData;
  pending: boolean;
}

/**
 * The collection over onSnapshot, from the console's firebase app, which has no signed-in user:
 * its Firestore speaks to the console's own WebChannel (/hearth/v1/console/firestore), where the
 * console session is the caller. The default database only (the web
 * SDK's Firestore picks its database when it starts).
 */
export function LiveView({ databaseId, collectionPath }: { databaseId: string; collectionPath: string }) {
  const { firebase } = useConsole();
  const [documents, setDocuments] = useState<LiveDocument[] | null>(null);
  const [updates, setUpdates] = useState(0);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (databaseId !== '(default)') return;
    const db = firestoreOf(firebase.app, consoleChannelPrefix);
    const unsubscribe = onSnapshot(
      query(collection(db, collectionPath), limit(100)),
      { includeMetadataChanges: true },
      (snapshot) => {
        setDocuments(snapshot.docs.map((doc) => ({ id: doc.id, data: doc.data(), pending: doc.metadata.hasPendingWrites })));
        setUpdates((count) => count + 1);
        setError(null);
      },
      (caught) => setError(`${describeError(caught)} The live view stopped; open it again to retry.`),
    );
    return unsubscribe;
  }, [firebase.app, databaseId, collectionPath]);
  if (databaseId !== '(default)') return <Empty>The live view shows the (default) database only. Use the Documents tab for {databaseId}.</Empty>;
  return (
    <div data-testid="live-view">
      <p className="console-muted" role="status">
        Live: {updates} snapshot{updates === 1 ? '' : 's'} received (first 100 documents).
      </p>
      {error && <p role="alert" className="console-alert">{error}</p>}
      {!documents && !error && <Loading what="the live view" />}
      {documents && documents.length === 0 && <Empty>No documents yet; new ones appear here as they are written.</Empty>}
      {documents && documents.length > 0 && (
        <ul className="console-list">
          {documents.map((doc) => (
            <li key={doc.id} data-testid="live-document">
              <strong>{doc.id}</strong> <code>{JSON.stringify(doc.data)}</code>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
