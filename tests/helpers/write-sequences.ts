/**
 * Writes of every kind to one document, for the differential test of several writes to the same document in one
 * commit (tests/firestore/differential-ids-writes.test.ts): each kind as the REST API takes it, with the document's
 * update time where the kind carries one (that server's own, or a time no document has).
 */
export type WriteKind = keyof typeof writeKinds;

const noSuchTime = '2020-01-01T00:00:00Z';
const otherTime = '2021-01-01T00:00:00.5Z';
const int = (n: number) => ({ integerValue: String(n) });
const increment = [{ fieldPath: 'x', increment: int(1) }];

/** name: the document's full name; updateTime: its update time when it exists. */
type Build = (name: string, updateTime: string | undefined) => Record<string, unknown>;

export const writeKinds = {
  set: (name) => ({ update: { name, fields: { a: int(1) } } }),
  merge: (name) => ({ update: { name, fields: { b: int(2) } }, updateMask: { fieldPaths: ['b'] } }),
  update: (name) => ({ update: { name, fields: { b: int(2) } }, updateMask: { fieldPaths: ['b'] }, currentDocument: { exists: true } }),
  updateAtTime: (name, time) => ({ update: { name, fields: { b: int(2) } }, updateMask: { fieldPaths: ['b'] }, currentDocument: { updateTime: time ?? noSuchTime } }),
  updateAtOtherTime: (name) => ({ update: { name, fields: { b: int(2) } }, updateMask: { fieldPaths: ['b'] }, currentDocument: { updateTime: otherTime } }),
  create: (name) => ({ update: { name, fields: { c: int(3) } }, currentDocument: { exists: false } }),
  createMasked: (name) => ({ update: { name, fields: { c: int(3) } }, updateMask: { fieldPaths: ['c'] }, currentDocument: { exists: false } }),
  setWithTransform: (name) => ({ update: { name, fields: { a: int(1) } }, updateTransforms: increment }),
  delete: (name) => ({ delete: name }),
  deleteExisting: (name) => ({ delete: name, currentDocument: { exists: true } }),
  deleteMissing: (name) => ({ delete: name, currentDocument: { exists: false } }),
  deleteAtTime: (name, time) => ({ delete: name, currentDocument: { updateTime: time ?? noSuchTime } }),
  transform: (name) => ({ transform: { document: name, fieldTransforms: increment } }),
  transformExisting: (name) => ({ transform: { document: name, fieldTransforms: increment }, currentDocument: { exists: true } }),
  transformCreate: (name) => ({ transform: { document: name, fieldTransforms: increment }, currentDocument: { exists: false } }),
  verify: (name) => ({ verify: name, currentDocument: { exists: true } }),
  verifyMissing: (name) => ({ verify: name, currentDocument: { exists: false } }),
  verifyAtTime: (name, time) => ({ verify: name, currentDocument: { updateTime: time ?? noSuchTime } }),
} satisfies Record<string, Build>;

const pairKinds: WriteKind[] = ['set', 'merge', 'update', 'updateAtTime', 'create', 'delete', 'deleteExisting', 'deleteMissing', 'deleteAtTime', 'transform', 'transformExisting', 'verify', 'verifyMissing'];

/** Every ordered pair of the common kinds, then three-write sequences where the collapsed kind matters. */
export const writeSequences: WriteKind[][] = [
  ...pairKinds.flatMap((first) => pairKinds.map((second) => [first, second])),
  ['createMasked', 'create'],
  ['delete', 'createMasked'],
  ['set', 'createMasked'],
  ['setWithTransform', 'create'],
  ['delete', 'transformCreate'],
  ['transformCreate', 'create'],
  ['updateAtTime', 'updateAtOtherTime'],
  ['verifyAtTime', 'set'],
  ['set', 'verifyAtTime'],
  ['delete', 'set', 'update'],
  ['delete', 'merge', 'update'],
  ['set', 'delete', 'create'],
  ['update', 'delete', 'create'],
  ['delete', 'create', 'update'],
  ['delete', 'create', 'create'],
  ['create', 'delete', 'create'],
  ['create', 'set', 'create'],
  ['create', 'update', 'create'],
  ['update', 'set', 'create'],
  ['set', 'update', 'create'],
  ['update', 'update', 'create'],
  ['delete', 'delete', 'update'],
  ['delete', 'delete', 'create'],
  ['delete', 'set', 'create'],
  ['delete', 'set', 'deleteExisting'],
  ['delete', 'set', 'updateAtTime'],
  ['delete', 'deleteMissing', 'update'],
  ['deleteExisting', 'create', 'update'],
  ['create', 'deleteExisting', 'create'],
  ['update', 'delete', 'update'],
  ['updateAtTime', 'set', 'updateAtTime'],
  ['updateAtTime', 'updateAtTime', 'deleteAtTime'],
  ['updateAtTime', 'merge', 'update'],
  ['updateAtTime', 'set', 'create'],
  ['deleteAtTime', 'create', 'create'],
  ['update', 'create', 'delete'],
  ['set', 'transform', 'update'],
];

export function buildWrite(kind: WriteKind, name: string, updateTime: string | undefined): Record<string, unknown> {
  return writeKinds[kind](name, updateTime);
}
