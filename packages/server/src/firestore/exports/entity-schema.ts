import protobuf from 'protobufjs';

/**
 * The records of a Firestore export: App Engine's `storage_onestore_v3.EntityProto` (proto2, with
 * groups), the part of it Firestore writes. Field numbers are Google's; every field is optional
 * here so that a record lacking one is decoded and judged by entity-values.ts, not refused by the
 * decoder. Strings that may hold bytes (a property's value) are `bytes`.
 *
 * How Firestore uses it (seen in the exports of gcloud's emulator 1.19.x, which is the oracle):
 * the key's path is the document's (kind = collection id, name = document id, or id = the number
 * of an `__id<n>__` id), `app` is `<region>~<project>`, `database_id` is set for a named database;
 * each field is a property (value in `raw_property`, an empty array in `property`), a meaning telling
 * timestamps (7, µs), geopoints (9), bytes (14/16), maps (19, the nested EntityProto as bytes),
 * empty arrays (24) and vectors (31); array elements are repeated properties marked `multiple`.
 */
const schema = `
syntax = "proto2";
package onestore;

message Path {
  repeated group Element = 1 {
    optional string type = 2;
    optional int64 id = 3;
    optional string name = 4;
  }
}

message Reference {
  optional string app = 13;
  optional string name_space = 20;
  optional Path path = 14;
  optional string database_id = 23;
}

message PropertyValue {
  optional int64 int64Value = 1;
  optional bool booleanValue = 2;
  optional bytes stringValue = 3;
  optional double doubleValue = 4;
  optional group PointValue = 5 {
    optional double x = 6;
    optional double y = 7;
  }
  optional group UserValue = 8 {
    optional string email = 9;
    optional string auth_domain = 10;
  }
  optional group ReferenceValue = 12 {
    optional string app = 13;
    optional string name_space = 20;
    repeated group PathElement = 14 {
      optional string type = 15;
      optional int64 id = 16;
      optional string name = 17;
    }
    optional string database_id = 23;
  }
}

message Property {
  optional int32 meaning = 1;
  optional string meaning_uri = 2;
  optional string name = 3;
  optional bool multiple = 4;
  optional PropertyValue value = 5;
}

message EntityProto {
  optional Reference key = 13;
  optional Path entity_group = 16;
  repeated Property property = 14;
  repeated Property raw_property = 15;
}
`;

const root = protobuf.parse(schema, { keepCase: true }).root.resolveAll();
export const EntityProto = root.lookupType('onestore.EntityProto');

/** A 64-bit integer as protobufjs decodes it (a Long, or a number when small and long.js is absent). */
export type Int64 = number | { toString(): string };

export interface PathElement {
  type?: string;
  id?: Int64;
  name?: string;
}

export interface ReferenceValueMessage {
  app?: string;
  name_space?: string;
  pathElement?: PathElement[];
  database_id?: string;
}

export interface PropertyValueMessage {
  int64Value?: Int64;
  booleanValue?: boolean;
  stringValue?: Uint8Array;
  doubleValue?: number;
  pointValue?: { x?: number; y?: number };
  userValue?: { email?: string };
  referenceValue?: ReferenceValueMessage;
}

export interface PropertyMessage {
  meaning?: number;
  name?: string;
  multiple?: boolean;
  value?: PropertyValueMessage;
}

export interface EntityMessage {
  key?: { app?: string; name_space?: string; path?: { element?: PathElement[] }; database_id?: string };
  entity_group?: { element?: PathElement[] };
  property?: PropertyMessage[];
  raw_property?: PropertyMessage[];
}

export const meanings = {
  timestamp: 7,
  geoPoint: 9,
  blob: 14,
  text: 15,
  byteString: 16,
  entity: 19,
  emptyList: 24,
  vector: 31,
} as const;

export function decodeEntity(bytes: Uint8Array): EntityMessage {
  return EntityProto.decode(bytes) as unknown as EntityMessage;
}

export function encodeEntity(entity: EntityMessage): Uint8Array {
  return EntityProto.encode(EntityProto.fromObject(entity as Record<string, unknown>)).finish();
}
