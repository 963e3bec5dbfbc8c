import type { DocumentChange, DocumentStore } from '../../storage/document-store.js';
import { compositeEntries, indexSetText, type CompositeIndex } from '../core/composite-indexes.js';
import { changeFor, docFromRow, keyOfPath, nameKey } from '../core/documents.js';
import { checkDatabase, pathSegments, type DatabaseId } from '../core/paths.js';
import type { Fields, Value } from '../core/values.js';
import { documentToEntity, entityToDocument, UnreadableEntity, type ExportedDocument } from './entity-values.js';
import { ExportWriter, findExport, NotAnExport } from './export-layout.js';
import { readLogRecords } from './leveldb-log.js';

/**
 * A Firestore export (export-layout.ts) into one Hearth database, and a Hearth database out as
 * one. An import is one store transaction (DocumentStore.loadDocuments): into a database with no
 * documents, all or nothing, read and written a batch at a time so memory stays flat however
 * large the export. Every document gets the import's commit time as its create and update time
 * (an export keeps no times, as Google's own imports do).
 */

export interface ImportOptions {
  /** The project and database written to; by default the export's own. */
  projectId?: string;
  databaseId?: string;
  /** Only documents of these collection ids (collection groups, at any depth), as gcloud's --collection-ids. */
  collectionIds?: readonly string[];
  /** The composite indexes the server declares (its --indexes file), so their entries are built now. */
  compositeIndexes?: readonly CompositeIndex[];
  /** Told after each batch: records read, documents written so far. */
  progress?: (read: number, written: number) => void;
  batchSize?: number;
}

export interface ImportReport {
  target: DatabaseId;
  /** The export's project and database, as its records say. */
  source: DatabaseId | undefined;
  files: number;
  records: number;
  documents: number;
  /** Records left out by collectionIds. */
  skipped: number;
  indexEntries: number;
}

export { NotAnExport, UnreadableEntity };

export async function importExport(store: DocumentStore, path: string, options: ImportOptions = {}): Promise<ImportReport> {
  const { outputFiles } = findExport(path);
  const source = firstDocument(outputFiles);
  const target = checkDatabase(
    options.projectId ?? source?.projectId ?? '',
    options.databaseId ?? source?.databaseId ?? '(default)',
    'emulator',
  );
  const sourcePrefix = source && `projects/${source.projectId}/databases/${source.databaseId}/documents/`;
  const targetPrefix = `projects/${target.projectId}/databases/${target.databaseId}/documents/`;
  const indexes = options.compositeIndexes ?? [];
  const indexing = { composite: (doc: Parameters<typeof compositeEntries>[1]) => (indexes.length ? compositeEntries(indexes, doc) : []) };
  const wanted = options.collectionIds ? new Set(options.collectionIds) : undefined;
  const batchSize = options.batchSize ?? 1000;
  const counts = { records: 0, documents: 0, skipped: 0 };

  function* batches(commitTime: number): Generator<DocumentChange[]> {
    let batch: DocumentChange[] = [];
    for (const file of outputFiles) {
      for (const record of readLogRecords(file)) {
        counts.records++;
        const exported = readDocument(record, file);
        const key = keyOfPath(exported.path);
        if (wanted && !wanted.has(key.collectionId)) {
          counts.skipped++;
          continue;
        }
        const fields = sourcePrefix && sourcePrefix !== targetPrefix ? moveReferences(exported.fields, sourcePrefix, targetPrefix) : exported.fields;
        const doc = { key, fields, createTime: commitTime, updateTime: commitTime };
        batch.push(changeFor(undefined, doc, indexing, undefined, nameKey(key.path)));
        if (batch.length >= batchSize) {
          counts.documents += batch.length;
          yield batch;
          options.progress?.(counts.records, counts.documents);
          batch = [];
        }
      }
    }
    counts.documents += batch.length;
    if (batch.length) yield batch;
    options.progress?.(counts.records, counts.documents);
  }

  const report = await store.loadDocuments(`${target.projectId}/${target.databaseId}`, { batches, indexSet: indexSetText(indexes) });
  return {
    target,
    source: source && { projectId: source.projectId, databaseId: source.databaseId },
    files: outputFiles.length,
    records: counts.records,
    documents: report.documents,
    skipped: counts.skipped,
    indexEntries: report.indexEntries,
  };
}

function firstDocument(files: readonly string[]): ExportedDocument | undefined {
  for (const file of files) for (const record of readLogRecords(file)) return readDocument(record, file);
  return undefined;
}

function readDocument(record: Buffer, file: string): ExportedDocument {
  try {
    const exported = entityToDocument(record);
    pathSegments(exported.path); // the path rules every write obeys
    return exported;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new UnreadableEntity(`${file}: a record Hearth cannot take as a document: ${why}`);
  }
}

/** References into the exported database point into the target one (a project moved whole). */
function moveReferences(fields: Fields, from: string, to: string): Fields {
  const moved: Fields = new Map();
  for (const [name, value] of fields) moved.set(name, movedValue(value, from, to));
  return moved;
}

function movedValue(value: Value, from: string, to: string): Value {
  if (value.type === 'reference' && value.value.startsWith(from)) return { type: 'reference', value: to + value.value.slice(from.length) };
  if (value.type === 'array') return { type: 'array', values: value.values.map((element) => movedValue(element, from, to)) };
  if (value.type === 'map') return { type: 'map', fields: moveReferences(value.fields, from, to) };
  return value;
}

// ---- export -------------------------------------------------------------------------------

export interface ExportOptions {
  collectionIds?: readonly string[];
  progress?: (written: number) => void;
}

export interface ExportReport {
  documents: number;
  bytes: number;
}

const pageSize = 1000;

/** Every document of a database (in name order, a page at a time) into a new export folder. */
export async function exportDatabase(store: DocumentStore, db: DatabaseId, folder: string, options: ExportOptions = {}): Promise<ExportReport> {
  const dbKey = `${db.projectId}/${db.databaseId}`;
  const wanted = options.collectionIds ? new Set(options.collectionIds) : undefined;
  const writer = new ExportWriter(folder);
  let documents = 0;
  try {
    for (let after: Buffer | undefined; ; ) {
      const page = await store.scanDocuments(dbKey, { descending: false, limit: pageSize, ...(after ? { afterNameKey: after } : {}) });
      for (const row of page) {
        if (wanted && !wanted.has(row.collectionId)) continue;
        writer.add(documentToEntity(db.projectId, db.databaseId, row.path, docFromRow(row).fields));
        documents++;
      }
      options.progress?.(documents);
      if (page.length < pageSize) break;
      after = page[page.length - 1]!.nameKey;
    }
  } catch (error) {
    writer.abandon();
    throw error;
  }
  const { bytes } = writer.close();
  return { documents, bytes };
}
