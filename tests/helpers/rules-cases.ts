/** Shorthands for writing the security-rules corpus's cases (tests/helpers/rules-corpus-*.ts). */
import type { PlainFields, QuerySpec, RulesCase, WriteSpec } from './rules-requests.js';
import type { Caller } from './rules-tokens.js';

export const rulesHeader = "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {";
export const rulesFooter = '  }\n}';

/** A v2 ruleset whose body sits inside `match /databases/{database}/documents`. */
export const v2 = (body: string) => `${rulesHeader}\n${body.replace(/^\n+|\s+$/g, '')}\n${rulesFooter}\n`;

export const get = (caller: Caller, path: string, note?: string): RulesCase => ({ caller, operation: { kind: 'get', path }, note });
export const batchGet = (caller: Caller, paths: string[], note?: string): RulesCase => ({ caller, operation: { kind: 'batchGet', paths }, note });
export const query = (caller: Caller, spec: QuerySpec, note?: string): RulesCase => ({ caller, operation: { kind: 'query', query: spec }, note });
export const count = (caller: Caller, spec: QuerySpec, note?: string): RulesCase => ({ caller, operation: { kind: 'count', query: spec }, note });
export const commit = (caller: Caller, writes: WriteSpec[], note?: string): RulesCase => ({ caller, operation: { kind: 'commit', writes }, note });
export const transaction = (caller: Caller, reads: string[], writes: WriteSpec[], note?: string): RulesCase => ({ caller, operation: { kind: 'transaction', reads, writes }, note });

export const create = (path: string, fields: PlainFields, extra: Partial<WriteSpec> = {}): WriteSpec => ({ op: 'create', path, fields, ...extra });
export const update = (path: string, fields: PlainFields, extra: Partial<WriteSpec> = {}): WriteSpec => ({ op: 'update', path, fields, ...extra });
export const set = (path: string, fields: PlainFields, extra: Partial<WriteSpec> = {}): WriteSpec => ({ op: 'set', path, fields, ...extra });
export const merge = (path: string, fields: PlainFields, extra: Partial<WriteSpec> = {}): WriteSpec => ({ op: 'merge', path, fields, ...extra });
export const remove = (path: string): WriteSpec => ({ op: 'delete', path });

/** The same request from each caller, so a ruleset's answer is seen for all of them. */
export const fromEach = (callers: Caller[], build: (caller: Caller) => RulesCase): RulesCase[] => callers.map(build);
