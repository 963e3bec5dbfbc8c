/** The corpus's queries as structured queries on the wire (REST, gRPC, Listen targets). */
import { documentName, databaseName, type InvariantServer } from './invariant-servers.js';
import type { QuerySpec } from './invariant-world.js';

type Json = Record<string, unknown>;

const operators = { '==': 'EQUAL', '<=': 'LESS_THAN_OR_EQUAL', '>': 'GREATER_THAN', in: 'IN' } as const;

export function queryParent(server: InvariantServer, spec: QuerySpec): string {
  return spec.scope.kind === 'collection' && spec.scope.parent ? documentName(server, spec.scope.parent) : `${databaseName(server)}/documents`;
}

/** The path under `documents` a REST query is posted to (`…/documents[/parent]:runQuery`). */
export function queryParentPath(spec: QuerySpec): string {
  return spec.scope.kind === 'collection' && spec.scope.parent ? `/${spec.scope.parent}` : '';
}

export function structuredQuery(server: InvariantServer, spec: QuerySpec, extra: Json = {}): Json {
  const filters = spec.filters.map((filter) => {
    if (filter.field === '__name__') return { fieldFilter: { field: { fieldPath: '__name__' }, op: 'EQUAL', value: { referenceValue: documentName(server, filter.path) } } };
    if (filter.op === 'in') return { fieldFilter: { field: { fieldPath: filter.field }, op: 'IN', value: { arrayValue: { values: filter.values.map((value) => ({ stringValue: value })) } } } };
    const value = typeof filter.value === 'number' ? { integerValue: String(filter.value) } : { stringValue: filter.value };
    return { fieldFilter: { field: { fieldPath: filter.field }, op: operators[filter.op], value } };
  });
  const query: Json = { from: [{ collectionId: spec.scope.collectionId, ...(spec.scope.kind === 'group' ? { allDescendants: true } : {}) }] };
  if (filters.length === 1) query.where = filters[0];
  if (filters.length > 1) query.where = { compositeFilter: { op: 'AND', filters } };
  if (spec.limit !== undefined) query.limit = spec.limit;
  return { ...query, ...extra };
}
