import type { Position } from './lexer.js';
import type { RulesValue } from './values.js';

/**
 * The parsed ruleset. Identifiers and calls are resolved in place by compile.ts (`ref`), so the
 * evaluator never looks a name up by string.
 */

export type BinaryOp = '||' | '&&' | '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | '+' | '-' | '*' | '/' | '%';

/** Where an identifier's value comes from, fixed at compile time. */
export type NameRef =
  | { scope: 'local'; slot: number }
  | { scope: 'wildcard'; slot: number }
  | { scope: 'global'; name: 'request' | 'resource' }
  | { scope: 'undefined' };

export type Expr = { pos: Position } & (
  | { kind: 'literal'; value: RulesValue }
  | { kind: 'ident'; name: string; ref?: NameRef }
  | { kind: 'member'; object: Expr; name: string }
  | { kind: 'index'; object: Expr; index: Expr }
  | { kind: 'slice'; object: Expr; start?: Expr; end?: Expr }
  | { kind: 'call'; name: string; args: Expr[]; fn?: FunctionDecl }
  | { kind: 'method'; object: Expr; name: string; args: Expr[]; namespace?: string }
  | { kind: 'unary'; op: '!' | '-'; operand: Expr }
  | { kind: 'binary'; op: BinaryOp; left: Expr; right: Expr }
  | { kind: 'ternary'; test: Expr; then: Expr; otherwise: Expr }
  | { kind: 'is'; operand: Expr; typeName: string }
  | { kind: 'list'; items: Expr[] }
  | { kind: 'map'; entries: [Expr, Expr][] }
  | { kind: 'path'; segments: PathPart[][] }
);

/** A path literal segment is text and `$(expr)` parts (`/users/$(uid)`). */
export type PathPart = string | Expr;

export interface LetBinding {
  name: string;
  pos: Position;
  value: Expr;
}

export interface FunctionDecl {
  name: string;
  pos: Position;
  params: { name: string; pos: Position }[];
  lets: LetBinding[];
  body: Expr;
  /** Local slots: parameters, then lets. */
  frameSize: number;
}

/** `pos` is the slash before the segment, where the emulator points its messages. */
export type PatternSegment = { pos: Position } & (
  | { kind: 'literal'; text: string }
  | { kind: 'single'; name: string }
  /** `{name=**}`: zero or more segments in version 2, one or more (and only last) in version 1. */
  | { kind: 'rest'; name: string }
);

export interface AllowStatement {
  pos: Position;
  methods: { name: string; pos: Position }[];
  condition?: Expr;
  /** The condition's source text. */
  conditionText?: string;
}

export interface MatchBlock {
  pos: Position;
  path: PatternSegment[];
  pathPos: Position;
  functions: FunctionDecl[];
  matches: MatchBlock[];
  allows: AllowStatement[];
}

export interface Ruleset {
  version: '1' | '2';
  versionPos?: Position;
  serviceName: string;
  servicePos: Position;
  functions: FunctionDecl[];
  matches: MatchBlock[];
}
