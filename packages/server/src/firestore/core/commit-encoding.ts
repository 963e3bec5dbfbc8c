import type { IndexEntry } from '../../storage/document-store.js';
import { singleFieldEntriesByField } from './document-entries.js';
import type { Doc } from './documents.js';
import { TimeSlices } from './time-slices.js';
import { fieldsToWire } from './value-wire.js';
import type { Fields } from './values.js';
import type { Write } from './writes.js';

/** A document's stored form worked out ahead of its commit: its fields JSON and index entries (all, and the single-field ones by top-level field). */
export interface EncodedDocument {
  fields: Fields;
  fieldsJson: string;
  entries: IndexEntry[];
  byField: Map<string, IndexEntry[]>;
}

/**
 * The stored form of every document a commit replaces whole (one update without mask or
 * transforms, the only write to its document), worked out before the commit's transaction and in
 * slices: what such a document becomes does not depend on what is stored, and encoding hundreds of
 * large documents at once inside the transaction would hold the event loop for all of it.
 */
export async function encodeReplacements(writes: readonly Write[], compositeOf: (doc: Doc) => IndexEntry[], slices = new TimeSlices()): Promise<Map<string, EncodedDocument>> {
  const writesPerPath = new Map<string, number>();
  for (const write of writes) writesPerPath.set(write.key.path, (writesPerPath.get(write.key.path) ?? 0) + 1);
  const encoded = new Map<string, EncodedDocument>();
  let bytesDone = 0;
  for (const write of writes) {
    if (write.kind !== 'update' || write.mask || write.transforms.length || !write.fields || writesPerPath.get(write.key.path) !== 1) continue;
    await slices.pause(bytesDone);
    const fields = write.fields;
    const fieldsJson = JSON.stringify(fieldsToWire(fields));
    const byField = singleFieldEntriesByField(fields);
    const entries = [...byField.values()].flat();
    entries.push(...compositeOf({ key: write.key, fields, createTime: 0, updateTime: 0 }));
    encoded.set(write.key.path, { fields, fieldsJson, entries, byField });
    bytesDone = fieldsJson.length;
  }
  return encoded;
}

/** The encoding of `doc` when it holds exactly the values that were encoded (the same value objects). */
export function encodingOf(doc: Doc | undefined, encoded: EncodedDocument | undefined): EncodedDocument | undefined {
  if (!doc || !encoded || doc.fields.size !== encoded.fields.size) return undefined;
  for (const [name, value] of doc.fields) if (encoded.fields.get(name) !== value) return undefined;
  return encoded;
}
