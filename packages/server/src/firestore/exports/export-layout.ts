import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import protobuf from 'protobufjs';
import { LogWriter, readLogRecords } from './leveldb-log.js';

/**
 * The folder layout of a Firestore export, as `gcloud firestore export`, gcloud's emulator
 * (`--export-on-exit`, `POST /emulator/v1/projects/{p}:export`) and `firebase emulators:export`
 * (its `firestore_export/` folder) write it:
 *
 *   NAME.overall_export_metadata                      a log file: a version record, then one listing
 *   all_namespaces/all_kinds/                         (or kind_<collection id>/ per chosen collection)
 *     all_namespaces_all_kinds.export_metadata        the export's name and times, the output files
 *     output-0, output-1, ...                         log files of entity records (entity-values.ts)
 *
 * The listing's fields (a file's path, its entity count and byte size) and the version record are
 * as gcloud's emulator 1.19.x writes them; Google's emulator reads Hearth's exports (tested).
 */
const schema = `
syntax = "proto2";
message OverallMetadata { repeated Part part = 1; }
message Part { optional Scope scope = 1; optional string path = 2; optional int64 entities = 3; optional int64 bytes = 4; }
message Scope { optional int32 kinds = 1; optional int32 namespaces = 3; }
message KindMetadata { optional Run run = 1; repeated OutputFile file = 2; }
message Run { optional string name = 1; optional int64 start_micros = 2; optional int64 end_micros = 3; }
message OutputFile { optional string folder = 1; optional string name = 2; }
`;
const root = protobuf.parse(schema, { keepCase: true }).root.resolveAll();
const OverallMetadata = root.lookupType('OverallMetadata');
const KindMetadata = root.lookupType('KindMetadata');

/** The version record gcloud's emulator writes first. */
const versionRecord = Buffer.from('3');
/** The scope gcloud's emulator writes for an export of all kinds in all namespaces. */
const allKindsScope = { kinds: 2, namespaces: 3 };

export class NotAnExport extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotAnExport';
  }
}

export interface ExportFiles {
  /** The overall metadata file. */
  metadataFile: string;
  /** Every output file of every part, in order. */
  outputFiles: string[];
}

/**
 * The files of the export at `path`: the folder holding the `.overall_export_metadata` file (or
 * a folder holding a `firestore_export/` one, as `firebase emulators:export` writes), or the file.
 */
export function findExport(path: string): ExportFiles {
  const target = resolve(path);
  if (!existsSync(target)) throw new NotAnExport(`${target} does not exist`);
  let metadataFile = target;
  if (statSync(target).isDirectory()) {
    const here = readdirSync(target).filter((name) => name.endsWith('.overall_export_metadata'));
    if (here.length === 0 && existsSync(join(target, 'firestore_export'))) return findExport(join(target, 'firestore_export'));
    if (here.length !== 1) throw new NotAnExport(`${target} holds ${here.length === 0 ? 'no' : 'more than one'} .overall_export_metadata file: give the export's folder`);
    metadataFile = join(target, here[0]!);
  }
  const folder = dirname(metadataFile);
  const outputFiles: string[] = [];
  for (const record of readLogRecords(metadataFile)) {
    if (record.equals(versionRecord)) continue;
    let listing: { part?: Array<{ path?: string }> };
    try {
      listing = OverallMetadata.toObject(OverallMetadata.decode(record)) as typeof listing;
    } catch (error) {
      throw new NotAnExport(`${metadataFile} is not an export's metadata: ${(error as Error).message}`);
    }
    for (const part of listing.part ?? []) {
      if (!part.path) continue;
      const partFolder = dirname(resolve(folder, part.path));
      if (relative(folder, partFolder).startsWith('..')) throw new NotAnExport(`${metadataFile} names a file outside its folder: ${part.path}`);
      outputFiles.push(...outputsIn(partFolder));
    }
  }
  return { metadataFile, outputFiles };
}

/** output-0, output-1, ... in number order. */
function outputsIn(folder: string): string[] {
  if (!existsSync(folder)) throw new NotAnExport(`the export's part ${folder} is missing`);
  return readdirSync(folder)
    .filter((name) => /^output-\d+$/.test(name))
    .sort((a, b) => Number(a.slice(7)) - Number(b.slice(7)))
    .map((name) => join(folder, name));
}

/**
 * Writes one export (all kinds) into a new (or empty) folder: records are added one at a time and
 * go to disk as they come; `close` writes the metadata, which makes it an export.
 */
export class ExportWriter {
  private readonly partFolder: string;
  private readonly output: LogWriter;
  private readonly started = BigInt(Date.now()) * 1000n;
  private entities = 0;

  constructor(
    private readonly folder: string,
    private readonly name = basename(resolve(folder)),
  ) {
    if (existsSync(folder) && readdirSync(folder).length > 0) throw new NotAnExport(`${resolve(folder)} is not empty: export into a new folder`);
    this.partFolder = join(folder, 'all_namespaces', 'all_kinds');
    mkdirSync(this.partFolder, { recursive: true, mode: 0o700 });
    this.output = new LogWriter(join(this.partFolder, 'output-0'));
  }

  add(record: Uint8Array): void {
    this.output.add(Buffer.from(record.buffer, record.byteOffset, record.byteLength));
    this.entities++;
  }

  close(): { entities: number; bytes: number } {
    const { entities, name } = this;
    this.output.close();
    const kindMetadata = KindMetadata.encode(KindMetadata.fromObject({
      run: { name, start_micros: this.started.toString(), end_micros: (BigInt(Date.now()) * 1000n).toString() },
      file: [{ folder: '', name: 'output-0' }],
    })).finish();
    writeFileSync(join(this.partFolder, 'all_namespaces_all_kinds.export_metadata'), kindMetadata, { mode: 0o600 });
    const overall = new LogWriter(join(this.folder, `${name}.overall_export_metadata`));
    overall.add(versionRecord);
    overall.add(Buffer.from(OverallMetadata.encode(OverallMetadata.fromObject({
      part: [{ scope: allKindsScope, path: 'all_namespaces/all_kinds/all_namespaces_all_kinds.export_metadata', entities, bytes: this.output.size }],
    })).finish()));
    overall.close();
    return { entities, bytes: this.output.size };
  }

  /** After a failure: what was written goes (without metadata it was no export anyway). */
  abandon(): void {
    this.output.close();
    rmSync(join(this.folder, 'all_namespaces'), { recursive: true, force: true });
  }
}
