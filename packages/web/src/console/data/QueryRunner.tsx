import { useState, type FormEvent } from 'react';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useAction } from '../ui';
import { DocumentList } from './CollectionView';
import { runQuery, segmentsOf, type QueryAnswer } from './firestore-rest';
import { literalToValue } from './values';

const operators = ['EQUAL', 'NOT_EQUAL', 'LESS_THAN', 'LESS_THAN_OR_EQUAL', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'ARRAY_CONTAINS', 'IN', 'ARRAY_CONTAINS_ANY', 'NOT_IN'] as const;
const operatorLabels: Record<(typeof operators)[number], string> = {
  EQUAL: '==',
  NOT_EQUAL: '!=',
  LESS_THAN: '<',
  LESS_THAN_OR_EQUAL: '<=',
  GREATER_THAN: '>',
  GREATER_THAN_OR_EQUAL: '>=',
  ARRAY_CONTAINS: 'array-contains',
  IN: 'in',
  ARRAY_CONTAINS_ANY: 'array-contains-any',
  NOT_IN: 'not-in',
};

interface FilterRow {
  field: string;
  op: (typeof operators)[number];
  value: string;
}

/** The structured query for these rows (values are JSON literals; anything else is a string). */
export function buildQuery(collectionId: string, allDescendants: boolean, filters: FilterRow[], orderBy: { field: string; direction: 'ASCENDING' | 'DESCENDING' }[], limit: number | undefined): Record<string, unknown> {
  const conditions = filters
    .filter((row) => row.field.trim())
    .map((row) => ({ fieldFilter: { field: { fieldPath: row.field.trim() }, op: row.op, value: literalToValue(row.value) } }));
  return {
    from: [{ collectionId, ...(allDescendants ? { allDescendants: true } : {}) }],
    ...(conditions.length === 1 ? { where: conditions[0] } : conditions.length > 1 ? { where: { compositeFilter: { op: 'AND', filters: conditions } } } : {}),
    ...(orderBy.some((order) => order.field.trim()) ? { orderBy: orderBy.filter((order) => order.field.trim()).map((order) => ({ field: { fieldPath: order.field.trim() }, direction: order.direction })) } : {}),
    ...(limit ? { limit } : {}),
  };
}

export function QueryRunner({ databaseId, collectionPath }: { databaseId: string; collectionPath: string }) {
  const { projectId } = useConsole();
  const [filters, setFilters] = useState<FilterRow[]>([{ field: '', op: 'EQUAL', value: '' }]);
  const [orderField, setOrderField] = useState('');
  const [direction, setDirection] = useState<'ASCENDING' | 'DESCENDING'>('ASCENDING');
  const [limit, setLimit] = useState('50');
  const [group, setGroup] = useState(false);
  const [answer, setAnswer] = useState<QueryAnswer | null>(null);
  const action = useAction();
  const segments = segmentsOf(collectionPath);

  function run(event: FormEvent) {
    event.preventDefault();
    setAnswer(null);
    void action.run(async () => {
      const query = buildQuery(segments[segments.length - 1]!, group, filters, [{ field: orderField, direction }], Number(limit) || undefined);
      setAnswer(await runQuery(projectId, databaseId, group ? '' : segments.slice(0, -1).join('/'), query));
    });
  }

  return (
    <form className="console-panel" aria-label="Query" onSubmit={run}>
      {filters.map((row, index) => (
        <div className="console-row" key={index}>
          <input aria-label={`Filter ${index + 1} field`} placeholder="field" value={row.field} onChange={(event) => setFilters(filters.map((old, i) => (i === index ? { ...old, field: event.target.value } : old)))} />
          <select aria-label={`Filter ${index + 1} operator`} value={row.op} onChange={(event) => setFilters(filters.map((old, i) => (i === index ? { ...old, op: event.target.value as FilterRow['op'] } : old)))}>
            {operators.map((op) => (
              <option key={op} value={op}>
                {operatorLabels[op]}
              </option>
            ))}
          </select>
          <input aria-label={`Filter ${index + 1} value`} placeholder='value (JSON: 3, true, "text", [1,2])' value={row.value} onChange={(event) => setFilters(filters.map((old, i) => (i === index ? { ...old, value: event.target.value } : old)))} />
          <button type="button" aria-label={`Remove filter ${index + 1}`} onClick={() => setFilters(filters.filter((_, i) => i !== index))}>
            ✕
          </button>
        </div>
      ))}
      <div className="console-row">
        <button type="button" onClick={() => setFilters([...filters, { field: '', op: 'EQUAL', value: '' }])}>
          Add filter
        </button>
        <label>
          Order by <input aria-label="Order by field" value={orderField} onChange={(event) => setOrderField(event.target.value)} placeholder="field" />
        </label>
        <select aria-label="Direction" value={direction} onChange={(event) => setDirection(event.target.value as 'ASCENDING' | 'DESCENDING')}>
          <option value="ASCENDING">ascending</option>
          <option value="DESCENDING">descending</option>
        </select>
        <label>
          Limit <input aria-label="Limit" type="number" min={1} max={1000} value={limit} onChange={(event) => setLimit(event.target.value)} />
        </label>
        <label>
          <input type="checkbox" checked={group} onChange={(event) => setGroup(event.target.checked)} /> Every collection named {segments[segments.length - 1]}
        </label>
        <button type="submit" disabled={action.busy}>
          Run query
        </button>
      </div>
      {action.busy && <Loading what="results" />}
      <ErrorNote error={action.error} />
      {answer && (
        <div data-testid="query-results">
          <h3>
            {answer.documents.length} result{answer.documents.length === 1 ? '' : 's'}
          </h3>
          {answer.documents.length === 0 ? <Empty>No document matches. Loosen a filter or check the field names.</Empty> : <DocumentList databaseId={databaseId} documents={answer.documents} />}
          <h3>Plan</h3>
          <pre className="console-code" data-testid="query-plan">
            {answer.plan ? JSON.stringify({ indexesUsed: answer.plan.indexesUsed ?? [], ...(answer.stats ? { executionStats: answer.stats } : {}) }, null, 2) : 'The server did not describe its plan.'}
          </pre>
        </div>
      )}
    </form>
  );
}
