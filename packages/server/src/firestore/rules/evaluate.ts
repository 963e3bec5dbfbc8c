import type { Expr, FunctionDecl } from './ast.js';
import { callConversion, callNamespace } from './library-functions.js';
import { callMethod, indexValue, sliceValue } from './library-methods.js';
import { functionNotFound } from './library-time.js';
import { arithmetic, negate, not } from './operators.js';
import { symbolicCompare, symbolicIn } from './symbolic.js';
import {
  compareOrdered,
  Constrained,
  fault,
  isList,
  nullValueError,
  propertyUndefined,
  rulesEquals,
  RulesFault,
  RulesDuration,
  RulesLatLng,
  RulesMap,
  RulesMapDiff,
  RulesPath,
  RulesSet,
  RulesTimestamp,
  strictEquals,
  typeName,
  Unknown,
  type RulesValue,
} from './values.js';

/**
 * The expression evaluator: a tree walk over names resolved at compile time. It is synchronous:
 * a document lookup that is not yet cached throws NeedLookup, the caller awaits it and evaluates
 * again (rules are deterministic), so a rule without get()/exists() never awaits.
 */

export type LookupKind = 'get' | 'exists' | 'getAfter' | 'existsAfter';

export interface EvalContext {
  request: RulesValue;
  resource: RulesValue;
  /** The matched path's wildcard values, by slot; Unknown where a list query leaves them open. */
  wildcards: readonly RulesValue[];
  lookup(kind: LookupKind, path: RulesValue): RulesValue;
  debug?: (value: RulesValue) => void;
}

interface Frame {
  fn: FunctionDecl;
  values: (RulesValue | undefined)[];
}

/** Function calls nest at most this deep (recursion is refused at compile time). */
const maxCallDepth = 20;

export function evaluate(expr: Expr, ctx: EvalContext, frame?: Frame, depth = 0): RulesValue {
  switch (expr.kind) {
    case 'literal':
      return expr.value;
    case 'ident':
      return readName(expr, ctx, frame, depth);
    case 'member': {
      const object = evaluate(expr.object, ctx, frame, depth);
      if (object instanceof RulesMap) return object.field(expr.name);
      if (object === null || object instanceof Unknown) throw nullValueError();
      if (object instanceof Constrained) throw fault(`Property ${expr.name} is undefined on object.`);
      throw propertyUndefined(expr.name);
    }
    case 'index':
      return indexValue(known(evaluate(expr.object, ctx, frame, depth)), known(evaluate(expr.index, ctx, frame, depth)));
    case 'slice':
      return sliceValue(
        known(evaluate(expr.object, ctx, frame, depth)),
        expr.start && known(evaluate(expr.start, ctx, frame, depth)),
        expr.end && known(evaluate(expr.end, ctx, frame, depth)),
      );
    case 'call':
      return call(expr, ctx, frame, depth);
    case 'method': {
      const args = expr.args.map((arg) => known(evaluate(arg, ctx, frame, depth)));
      if (expr.namespace === 'firestore') return crossServiceLookup(expr.name, args, ctx);
      if (expr.namespace !== undefined) return callNamespace(expr.namespace, expr.name, args);
      return callMethod(known(evaluate(expr.object, ctx, frame, depth)), expr.name, args);
    }
    case 'unary': {
      const operand = known(evaluate(expr.operand, ctx, frame, depth));
      return expr.op === '!' ? not(operand) : negate(operand);
    }
    case 'binary':
      return binary(expr, ctx, frame, depth);
    case 'ternary': {
      const test = known(evaluate(expr.test, ctx, frame, depth));
      if (typeof test !== 'boolean') throw fault(`Unsupported operation error. Received: ${typeName(test)} ? any : any. Expected: bool ? any : any.`);
      return evaluate(test ? expr.then : expr.otherwise, ctx, frame, depth);
    }
    case 'is':
      return isType(known(evaluate(expr.operand, ctx, frame, depth)), expr.typeName);
    case 'list':
      return expr.items.map((item) => known(evaluate(item, ctx, frame, depth)));
    case 'map': {
      const entries = new Map<string, RulesValue>();
      for (const [keyExpr, valueExpr] of expr.entries) {
        const key = known(evaluate(keyExpr, ctx, frame, depth));
        if (typeof key !== 'string') throw fault(`Unsupported operation error. Received: map key of type ${typeName(key)}. Expected: string.`);
        entries.set(key, known(evaluate(valueExpr, ctx, frame, depth)));
      }
      return new RulesMap(entries);
    }
    case 'path':
      return new RulesPath(
        expr.segments.map((parts) =>
          parts
            .map((part) => {
              if (typeof part === 'string') return part;
              const value = known(evaluate(part, ctx, frame, depth));
              if (value instanceof RulesPath) return value.segments.join('/');
              if (typeof value === 'string' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
              throw fault(`Unsupported operation error. Received: path segment of type ${typeName(value)}. Expected: string.`);
            })
            .join(''),
        ),
      );
  }
}

/** Storage rules' `firestore.get(path)` and `firestore.exists(path)`: the project's documents, as get()/exists() read them. */
function crossServiceLookup(name: string, args: RulesValue[], ctx: EvalContext): RulesValue {
  if (name !== 'get' && name !== 'exists') return functionNotFound(`firestore.${name}`);
  if (args.length !== 1) throw fault(`Incorrect number of arguments. Received: ${args.length}. Expected: firestore.${name}(path).`);
  return ctx.lookup(name, args[0]!);
}

function known(value: RulesValue): RulesValue {
  if (value instanceof Unknown) throw nullValueError();
  return value;
}

function readName(expr: Expr & { kind: 'ident' }, ctx: EvalContext, frame: Frame | undefined, depth: number): RulesValue {
  const ref = expr.ref;
  switch (ref?.scope) {
    case 'local': {
      const values = frame!.values;
      let value = values[ref.slot];
      if (value === undefined) {
        // `let` bindings are evaluated when first read, so an unused one cannot fail the rule.
        const binding = frame!.fn.lets[ref.slot - frame!.fn.params.length]!;
        value = evaluate(binding.value, ctx, frame, depth);
        values[ref.slot] = value;
      }
      return value;
    }
    case 'wildcard':
      return known(ctx.wildcards[ref.slot] ?? null);
    case 'global':
      return ref.name === 'request' ? ctx.request : ctx.resource;
    default:
      // The emulator compiles an unknown variable with a warning and reads it as a null value error.
      throw nullValueError();
  }
}

function call(expr: Expr & { kind: 'call' }, ctx: EvalContext, frame: Frame | undefined, depth: number): RulesValue {
  const args = expr.args.map((arg) => known(evaluate(arg, ctx, frame, depth)));
  const fn = expr.fn;
  if (fn) {
    if (args.length !== fn.params.length) throw fault(`Incorrect number of arguments supplied to function: ${fn.name}.`);
    if (depth >= maxCallDepth) throw fault('Maximum function call depth exceeded.');
    const values: (RulesValue | undefined)[] = new Array(fn.frameSize);
    for (let i = 0; i < args.length; i++) values[i] = args[i];
    return evaluate(fn.body, ctx, { fn, values }, depth + 1);
  }
  switch (expr.name) {
    case 'get':
    case 'exists':
    case 'getAfter':
    case 'existsAfter':
      if (args.length !== 1) throw fault(`Incorrect number of arguments. Received: ${args.length}. Expected: ${expr.name}(path).`);
      return ctx.lookup(expr.name, args[0]!);
    case 'int':
    case 'float':
    case 'string':
    case 'path':
    case 'debug':
      return callConversion(expr.name, args, ctx.debug);
  }
  return functionNotFound(expr.name);
}

function binary(expr: Expr & { kind: 'binary' }, ctx: EvalContext, frame: Frame | undefined, depth: number): RulesValue {
  const op = expr.op;
  if (op === '&&' || op === '||') return logical(op, expr, ctx, frame, depth);
  const left = known(evaluate(expr.left, ctx, frame, depth));
  const right = known(evaluate(expr.right, ctx, frame, depth));
  switch (op) {
    case '==':
    case '!=':
      if (left instanceof Constrained || right instanceof Constrained) return symbolicCompare(op, left, right);
      return rulesEquals(left, right) === (op === '==');
    case '<':
    case '<=':
    case '>':
    case '>=': {
      if (left instanceof Constrained || right instanceof Constrained) return symbolicCompare(op, left, right);
      const order = compareOrdered(left, right, op);
      if (Number.isNaN(order)) return false;
      return op === '<' ? order < 0 : op === '<=' ? order <= 0 : op === '>' ? order > 0 : order >= 0;
    }
    case 'in':
      return contains(right, left);
    default:
      return arithmetic(op, left, right);
  }
}

/**
 * `&&` and `||` are commutative over errors, as in CEL: an error on one side is forgiven when
 * the other side decides (`false && error`, `error && false` are false; `true || error`,
 * `error || true` are true). Checked against the emulator.
 */
function logical(op: '&&' | '||', expr: Expr & { kind: 'binary' }, ctx: EvalContext, frame: Frame | undefined, depth: number): boolean {
  const deciding = op === '||';
  let leftError: RulesFault | undefined;
  try {
    const left = known(evaluate(expr.left, ctx, frame, depth));
    if (left === deciding) return deciding;
    if (typeof left !== 'boolean') leftError = logicalTypeError(op, left);
  } catch (error) {
    if (!(error instanceof RulesFault)) throw error;
    leftError = error;
  }
  let right: RulesValue;
  try {
    right = known(evaluate(expr.right, ctx, frame, depth));
  } catch (error) {
    if (leftError && error instanceof RulesFault) throw leftError;
    throw error;
  }
  if (right === deciding) return deciding;
  if (leftError) throw leftError;
  if (typeof right !== 'boolean') throw logicalTypeError(op, right);
  return right;
}

function logicalTypeError(op: string, value: RulesValue): RulesFault {
  return fault(`Unsupported operation error. Received: ${typeName(value)} ${op} bool. Expected: bool ${op} bool.`);
}

function contains(container: RulesValue, value: RulesValue): boolean {
  if (isList(container)) return container.some((item) => strictEquals(item, value));
  if (container instanceof RulesMap) return typeof value === 'string' && container.has(value);
  if (container instanceof RulesSet) return container.has(value);
  if (container instanceof Constrained) return symbolicIn(value, container);
  if (container === null) throw nullValueError();
  throw fault('Function not found error: Name: [in].');
}

export const typeNames = ['bool', 'bytes', 'constraint', 'duration', 'float', 'int', 'latlng', 'list', 'map', 'map_diff', 'number', 'path', 'set', 'string', 'timestamp'];

function isType(value: RulesValue, name: string): boolean {
  switch (name) {
    case 'bool':
      return typeof value === 'boolean';
    case 'int':
      return typeof value === 'bigint';
    case 'float':
      return typeof value === 'number';
    case 'number':
      return typeof value === 'bigint' || typeof value === 'number';
    case 'string':
      return typeof value === 'string';
    case 'bytes':
      return Buffer.isBuffer(value);
    case 'list':
      return isList(value);
    case 'map':
      return value instanceof RulesMap;
    case 'set':
      // The emulator answers false for every value, sets included (`[1].toSet() is set`).
      return false;
    case 'path':
      return value instanceof RulesPath;
    case 'timestamp':
      return value instanceof RulesTimestamp;
    case 'duration':
      return value instanceof RulesDuration;
    case 'latlng':
      return value instanceof RulesLatLng;
    case 'map_diff':
      return value instanceof RulesMapDiff;
    case 'constraint':
      return value instanceof Constrained;
  }
  return false;
}
