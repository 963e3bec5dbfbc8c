import type { Expr, FunctionDecl, MatchBlock, PatternSegment, Ruleset } from './ast.js';
import { typeNames } from './evaluate.js';
import { RulesSyntaxError, type Position } from './lexer.js';
import { builtinFunctions, namespaces } from './library-functions.js';
import { type CompiledAllow, type CompiledMatch, MatchIndex, methodBits, patternText } from './matching.js';
import { parseRuleset } from './parser.js';
import { EvaluationDepths, maxEvaluationDepth } from './evaluation-depth.js';
import { isValidRe2 } from './regex.js';

/**
 * Parse once, check, and resolve every name to a slot, so evaluating never looks a name up by
 * string. Messages and severities follow Google's emulator (probed, 1.19.9): an unknown variable
 * or function, a misspelled method or a wrong argument count is only a WARNING there (and an
 * error when evaluated), while syntax errors, duplicate functions, recursion, bad globs and an
 * unsupported rules_version refuse the whole ruleset.
 */

export interface RulesIssue {
  /** 1-based; 0 when the issue has no place in the source (as the emulator's `L0:0`). */
  line: number;
  column: number;
  message: string;
  severity: 'ERROR' | 'WARNING';
}

export class RulesCompileError extends Error {
  constructor(
    readonly issues: RulesIssue[],
    readonly fileName: string,
  ) {
    // Like the emulator, the message lists the warnings found beside the errors (but not the
    // position-less version warning).
    super(`Error compiling rules:\n${issues.filter((issue) => issue.severity === 'ERROR' || issue.line > 0).map((issue) => `L${issue.line}:${issue.column} ${issue.message}`).join('\n')}`);
    this.name = 'RulesCompileError';
  }
}

/** Which product a ruleset guards: `service cloud.firestore` or `service firebase.storage`. */
export type RulesService = 'cloud.firestore' | 'firebase.storage';

/** The service a rules source declares (Firestore's when it names none Hearth serves, so the compiler says what is wrong). */
export function serviceOf(source: string): RulesService {
  return /service\s+firebase\.storage\b/.test(source) && !/service\s+cloud\.firestore\b/.test(source) ? 'firebase.storage' : 'cloud.firestore';
}

export interface CompiledRules {
  readonly service: RulesService;
  readonly fileName: string;
  readonly source: string;
  readonly version: '1' | '2';
  /** Warnings the ruleset compiled with. */
  readonly issues: readonly RulesIssue[];
  /** @internal the evaluator's view */
  readonly index: MatchIndex;
}

export const maxSourceBytes = 256 * 1024;

export function compileRules(source: string, fileName = 'firestore.rules', service: RulesService = 'cloud.firestore'): CompiledRules {
  if (Buffer.byteLength(source) > maxSourceBytes) {
    throw new RulesCompileError([{ line: 0, column: 0, message: `Ruleset is larger than ${maxSourceBytes / 1024} KiB.`, severity: 'ERROR' }], fileName);
  }
  let ruleset: Ruleset;
  try {
    ruleset = parseRuleset(source);
  } catch (error) {
    if (!(error instanceof RulesSyntaxError)) throw error;
    throw new RulesCompileError([{ ...error.position, message: error.message, severity: 'ERROR' }], fileName);
  }
  const checker = new Checker(ruleset.version, service);
  const matches = checker.ruleset(ruleset);
  checker.issues.sort((a, b) => a.line - b.line || a.column - b.column);
  if (checker.issues.some((issue) => issue.severity === 'ERROR')) throw new RulesCompileError(checker.issues, fileName);
  return { service, fileName, source, version: ruleset.version, issues: checker.issues, index: new MatchIndex(matches, ruleset.version) };
}

interface Scope {
  functions: Map<string, FunctionDecl>;
  parent?: Scope;
  /** Wildcard names of this and the enclosing matches, by slot (innermost last). */
  wildcards: string[];
}

interface Locals {
  slots: Map<string, number>;
  used: Set<number>;
}

class Checker {
  readonly issues: RulesIssue[] = [];
  private readonly calls = new Map<FunctionDecl, Set<FunctionDecl>>();
  private readonly compiled: CompiledMatch[] = [];
  private readonly declared: FunctionDecl[] = [];
  private readonly calledNames = new Set<string>();
  /** Every allow condition, for the evaluation depth check once all functions are known. */
  private readonly conditions: { pos: Position; condition: Expr }[] = [];
  private currentFunction: FunctionDecl | undefined;

  constructor(
    private readonly version: '1' | '2',
    private readonly service: RulesService,
  ) {}

  ruleset(ruleset: Ruleset): CompiledMatch[] {
    if (ruleset.serviceName !== this.service) {
      // The emulator accepts (and ignores) other services; Hearth refuses them, so a storage
      // ruleset deployed by mistake does not silently deny every Firestore request (or the reverse).
      this.error(ruleset.servicePos, `Unsupported service '${ruleset.serviceName}'. Expected 'service ${this.service}'.`);
    }
    if (ruleset.version === '1') {
      this.issues.push({ line: 0, column: 0, message: 'Ruleset uses old version (version [1]). Please update to the latest version (version [2]).', severity: 'WARNING' });
    }
    const scope = this.scope(ruleset.functions, undefined, []);
    for (const match of ruleset.matches) this.match(match, scope, []);
    const calleesFirst = this.checkRecursion();
    if (calleesFirst) this.checkEvaluationDepth(calleesFirst);
    for (const fn of this.declared) if (!this.calledNames.has(fn.name)) this.warning(fn.pos, `Unused function: ${fn.name}.`);
    return this.compiled;
  }

  private error(pos: Position, message: string): void {
    this.issues.push({ ...pos, message, severity: 'ERROR' });
  }

  private warning(pos: Position, message: string): void {
    this.issues.push({ ...pos, message, severity: 'WARNING' });
  }

  private scope(functions: FunctionDecl[], parent: Scope | undefined, wildcards: string[]): Scope {
    const map = new Map<string, FunctionDecl>();
    this.declared.push(...functions);
    for (const fn of functions) {
      if (map.has(fn.name)) this.error(fn.pos, `Function ${fn.name} is already defined.`);
      else map.set(fn.name, fn);
    }
    const scope: Scope = { functions: map, parent, wildcards };
    for (const fn of functions) this.functionBody(fn, scope);
    return scope;
  }

  private match(block: MatchBlock, parent: Scope, parentPattern: PatternSegment[]): void {
    this.checkGlobs(block.path);
    const pattern = [...parentPattern, ...block.path];
    const wildcards = [...parent.wildcards];
    for (const segment of block.path) if (segment.kind !== 'literal') wildcards.push(segment.name);
    const scope = this.scope(block.functions, parent, wildcards);
    const allows: CompiledAllow[] = [];
    for (const allow of block.allows) {
      let methods = 0;
      for (const method of allow.methods) {
        const bits = methodBits[method.name];
        if (bits === undefined) this.warning(method.pos, `Invalid method name: ${method.name}.`);
        else methods |= bits;
      }
      if (allow.condition) {
        this.resolve(allow.condition, scope, undefined);
        this.conditions.push({ pos: allow.pos, condition: allow.condition });
      }
      if (methods) {
        allows.push({
          methods,
          condition: allow.condition,
          line: allow.pos.line,
          methodNames: allow.methods.map((m) => m.name),
          explanation: {
            line: allow.pos.line,
            column: allow.pos.column,
            match: patternText(pattern),
            ...(allow.conditionText === undefined ? {} : { condition: allow.conditionText }),
          },
        });
      }
    }
    if (allows.length) this.compiled.push({ pattern, allows, order: this.compiled.length, wildcardCount: wildcards.length });
    for (const child of block.matches) this.match(child, scope, pattern);
  }

  private checkGlobs(path: PatternSegment[]): void {
    const globs = path.filter((segment) => segment.kind === 'rest');
    if (globs.length > 1) this.error(globs[1]!.pos, 'Invalid glob match expression. Only one glob match is permitted in a match declaration path.');
    else if (this.version === '1' && globs.length === 1 && path[path.length - 1] !== globs[0]) {
      this.error(globs[0]!.pos, 'Invalid glob match expression. Glob matches are permitted as the last segment in a match declaration path.');
    }
  }

  private functionBody(fn: FunctionDecl, scope: Scope): void {
    const locals: Locals = { slots: new Map(), used: new Set() };
    fn.params.forEach((param, slot) => {
      // The emulator's messages: a parameter named twice, a let naming what is already bound.
      if (locals.slots.has(param.name)) this.error(param.pos, `Variable ${param.name} is already defined.`);
      locals.slots.set(param.name, slot);
    });
    this.calls.set(fn, new Set());
    const outer = this.currentFunction;
    this.currentFunction = fn;
    fn.lets.forEach((binding, i) => {
      // A let sees the parameters and the lets before it (so lets can never refer in a circle).
      this.resolve(binding.value, scope, locals);
      if (locals.slots.has(binding.name)) this.error(binding.pos, `The identifier [${binding.name}] is already bound in the current scope.`);
      locals.slots.set(binding.name, fn.params.length + i);
    });
    this.resolve(fn.body, scope, locals);
    this.currentFunction = outer;
    fn.params.forEach((param, slot) => {
      const named = fn.params.filter((other) => other.name === param.name).length;
      if (named === 1 && !locals.used.has(slot)) this.warning(param.pos, `Unused variable: ${param.name}.`);
    });
    fn.lets.forEach((binding, i) => {
      if (!locals.used.has(fn.params.length + i)) this.warning(binding.pos, `Unused variable: ${binding.name}.`);
    });
  }

  private lookupFunction(name: string, scope: Scope | undefined): FunctionDecl | undefined {
    for (let current = scope; current; current = current.parent) {
      const fn = current.functions.get(name);
      if (fn) return fn;
    }
    return undefined;
  }

  private isVariable(name: string, scope: Scope, locals: Locals | undefined): boolean {
    return locals?.slots.has(name) === true || scope.wildcards.includes(name) || name === 'request' || name === 'resource';
  }

  private resolve(expr: Expr, scope: Scope, locals: Locals | undefined): void {
    const walk = (child: Expr) => this.resolve(child, scope, locals);
    switch (expr.kind) {
      case 'literal':
        return;
      case 'ident': {
        const slot = locals?.slots.get(expr.name);
        if (slot !== undefined) {
          locals!.used.add(slot);
          expr.ref = { scope: 'local', slot };
        } else if (scope.wildcards.includes(expr.name)) {
          expr.ref = { scope: 'wildcard', slot: scope.wildcards.lastIndexOf(expr.name) };
        } else if (expr.name === 'request' || expr.name === 'resource') {
          expr.ref = { scope: 'global', name: expr.name };
        } else {
          this.warning(expr.pos, `Invalid variable name: ${expr.name}.`);
          expr.ref = { scope: 'undefined' };
        }
        return;
      }
      case 'member':
        return walk(expr.object);
      case 'index':
        walk(expr.object);
        return walk(expr.index);
      case 'slice':
        walk(expr.object);
        if (expr.start) walk(expr.start);
        if (expr.end) walk(expr.end);
        return;
      case 'call': {
        expr.args.forEach(walk);
        this.calledNames.add(expr.name);
        const fn = this.lookupFunction(expr.name, scope);
        if (fn) {
          expr.fn = fn;
          if (this.currentFunction) this.calls.get(this.currentFunction)!.add(fn);
          if (fn.params.length !== expr.args.length) this.warning(expr.pos, `Incorrect number of arguments supplied to function: ${fn.name}.`);
        } else if (!builtinFunctions.has(expr.name)) {
          this.warning(expr.pos, `Invalid function name: ${expr.name}.`);
        }
        return;
      }
      case 'method': {
        const object = expr.object;
        const namespace = object.kind === 'ident' && (namespaces.has(object.name) || (object.name === 'firestore' && this.service === 'firebase.storage'));
        if (namespace && object.kind === 'ident' && !this.isVariable(object.name, scope, locals)) expr.namespace = object.name;
        else walk(object);
        expr.args.forEach(walk);
        const pattern = expr.args[0];
        if (['matches', 'replace', 'split'].includes(expr.name) && pattern?.kind === 'literal' && typeof pattern.value === 'string') {
          if (!isValidRe2(pattern.value)) this.error(pattern.pos, `Invalid regular expression pattern. Pattern: ${pattern.value}.`);
        }
        return;
      }
      case 'unary':
        return walk(expr.operand);
      case 'binary':
        walk(expr.left);
        return walk(expr.right);
      case 'ternary':
        walk(expr.test);
        walk(expr.then);
        return walk(expr.otherwise);
      case 'is':
        if (!typeNames.includes(expr.typeName)) {
          this.error(expr.pos, `An unsupported type identifier was used with the 'is' operator. Received ${expr.typeName}. Expected one of ${typeNames.join(',')}.`);
        }
        return walk(expr.operand);
      case 'list':
        return expr.items.forEach(walk);
      case 'map':
        for (const [key, value] of expr.entries) {
          walk(key);
          walk(value);
        }
        return;
      case 'path':
        for (const parts of expr.segments) {
          parts.forEach((part, i) => {
            if (typeof part === 'string') return;
            // `/users/$(uid)` with no variable uid is a template for path.bind({uid: ...}).
            if (part.kind === 'ident' && !this.isVariable(part.name, scope, locals)) parts[i] = `$(${part.name})`;
            else walk(part);
          });
        }
        return;
    }
  }

  /**
   * Refuses calls in a circle, and answers the functions callees first (undefined when there is a
   * circle). Iterative: a chain of thousands of functions (a 256 KiB source holds 7000) must not
   * overflow the compiler's own stack.
   */
  private checkRecursion(): FunctionDecl[] | undefined {
    const state = new Map<FunctionDecl, 'visiting' | 'done'>();
    const reported = new Set<FunctionDecl>();
    const calleesFirst: FunctionDecl[] = [];
    for (const root of this.calls.keys()) {
      if (state.has(root)) continue;
      state.set(root, 'visiting');
      // The path from the root, each with the callees it has yet to visit.
      const path: { fn: FunctionDecl; callees: Iterator<FunctionDecl> }[] = [{ fn: root, callees: this.calleesOf(root) }];
      while (path.length) {
        const top = path[path.length - 1]!;
        const next = top.callees.next();
        if (next.done) {
          state.set(top.fn, 'done');
          calleesFirst.push(top.fn);
          path.pop();
          continue;
        }
        const callee = next.value;
        const seen = state.get(callee);
        if (seen === 'done') continue;
        if (seen === 'visiting') {
          const names = path.map((step) => step.fn);
          const cycle = names.slice(names.indexOf(callee));
          if (cycle.some((member) => reported.has(member))) continue;
          cycle.forEach((member) => reported.add(member));
          if (cycle.length === 1) this.error(callee.pos, 'Recursive call is not allowed.');
          else this.error(cycle[0]!.pos, `Detected a call cycle between [${cycle.map((member) => member.name).join(',')}] functions.`);
          continue;
        }
        state.set(callee, 'visiting');
        path.push({ fn: callee, callees: this.calleesOf(callee) });
      }
    }
    return reported.size ? undefined : calleesFirst;
  }

  private calleesOf(fn: FunctionDecl): Iterator<FunctionDecl> {
    return (this.calls.get(fn) ?? new Set<FunctionDecl>()).values();
  }

  /** Refuses rules whose evaluation would recurse too deep (evaluation-depth.ts), where it first goes over. */
  private checkEvaluationDepth(calleesFirst: FunctionDecl[]): void {
    const depths = new EvaluationDepths();
    const tooDeep = `nests too deeply when evaluated: more than ${maxEvaluationDepth} levels through its let bindings and the functions it calls.`;
    for (const fn of calleesFirst) {
      if (depths.addFunction(fn) > maxEvaluationDepth) return this.error(fn.pos, `Function ${fn.name} ${tooDeep}`);
    }
    for (const { pos, condition } of this.conditions) {
      if (depths.of(condition) > maxEvaluationDepth) return this.error(pos, `This condition ${tooDeep}`);
    }
  }
}
