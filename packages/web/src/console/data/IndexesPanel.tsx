import { consoleRequest } from '../api';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useLoad } from '../ui';

interface IndexField {
  fieldPath: string;
  order?: 'ASCENDING' | 'DESCENDING';
  arrayConfig?: 'CONTAINS';
  vectorConfig?: { dimension: number };
}

interface DeclaredIndex {
  name: string;
  queryScope: 'COLLECTION' | 'COLLECTION_GROUP';
  fields: IndexField[];
  state: string;
}

function describeField(field: IndexField): string {
  if (field.vectorConfig) return `${field.fieldPath} (vector, ${field.vectorConfig.dimension} dimensions)`;
  if (field.arrayConfig) return `${field.fieldPath} (array contains)`;
  return `${field.fieldPath} ${field.order === 'DESCENDING' ? '↓' : '↑'}`;
}

/** The composite and vector indexes the server was started with (read-only: they come from a file). */
export function IndexesPanel({ databaseId }: { databaseId: string }) {
  const { projectId } = useConsole();
  const path = `/hearth/v1/console/projects/${encodeURIComponent(projectId)}/databases/${encodeURIComponent(databaseId)}/indexes`;
  const indexes = useLoad(() => consoleRequest<{ indexes: DeclaredIndex[] }>(path), path);
  return (
    <div>
      <h2>Indexes</h2>
      {indexes.loading && !indexes.data && <Loading what="indexes" />}
      <ErrorNote error={indexes.error} />
      {indexes.data && indexes.data.indexes.length === 0 && (
        <Empty>
          No composite or vector indexes are declared. Every single field is indexed already; declare composite, collection-group and vector indexes in a{' '}
          <code>firestore.indexes.json</code> file (the Firebase CLI's format) and start Hearth with <code>--indexes</code> pointing at it.
        </Empty>
      )}
      {indexes.data && indexes.data.indexes.length > 0 && (
        <>
          <p className="console-muted">
            From the <code>--indexes</code> file; change the file and restart Hearth to change them.
          </p>
          <table className="console-table" data-testid="declared-indexes">
            <thead>
              <tr>
                <th scope="col">Collection</th>
                <th scope="col">Scope</th>
                <th scope="col">Fields</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {indexes.data.indexes.map((index) => (
                <tr key={index.name} title={index.name}>
                  <td>{index.name.split('/collectionGroups/')[1]?.split('/')[0]}</td>
                  <td>{index.queryScope === 'COLLECTION_GROUP' ? 'Collection group' : 'Collection'}</td>
                  <td>{index.fields.map(describeField).join(', ')}</td>
                  <td>{index.state === 'READY' ? 'Ready' : index.state}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
