import type { Expr, FunctionDecl } from './ast.js';

/**
 * How deep evaluating a condition may recurse, in tree levels. The parser bounds each expression
 * (parser.ts maxNestingDepth), but the evaluator reads a `let` and runs a called function where
 * they are used (evaluate.ts), so a chain of lets, each reading the one before, through a chain of
 * functions, nests their depths: a few kilobytes of source could overflow the stack of the request
 * judged. Each level costs the evaluator a few stack frames; this bound keeps it far from the limit
 * and far above what real rules need (their conditions are a few levels deep, functions a handful).
 */
export const maxEvaluationDepth = 500;

/**
 * The deepest recursion evaluating each function and condition can reach. Functions must be
 * added callees first (their call graph has no cycle; compile.ts checks that before), so a call's
 * depth is known when its caller is measured, and no walk follows a chain of calls or lets.
 */
export class EvaluationDepths {
  private readonly functions = new Map<FunctionDecl, number>();
  /** The function being measured and the depths of its lets so far (a let reads only earlier ones). */
  private current: FunctionDecl | undefined;
  private lets: number[] = [];

  /** Measures a function (its callees already added) and answers its depth. */
  addFunction(fn: FunctionDecl): number {
    this.current = fn;
    this.lets = [];
    for (const binding of fn.lets) this.lets.push(this.of(binding.value));
    const depth = this.of(fn.body);
    this.functions.set(fn, depth);
    this.current = undefined;
    this.lets = [];
    return depth;
  }

  /** The depth of an expression outside any function (an allow condition), or inside the one being added. */
  of(expr: Expr): number {
    switch (expr.kind) {
      case 'literal':
        return 1;
      case 'ident': {
        const ref = expr.ref;
        const fn = this.current;
        if (ref?.scope !== 'local' || !fn || ref.slot < fn.params.length) return 1;
        return 1 + (this.lets[ref.slot - fn.params.length] ?? 0);
      }
      case 'member':
        return 1 + this.of(expr.object);
      case 'index':
        return 1 + Math.max(this.of(expr.object), this.of(expr.index));
      case 'slice':
        return 1 + Math.max(this.of(expr.object), expr.start ? this.of(expr.start) : 0, expr.end ? this.of(expr.end) : 0);
      case 'call': {
        // Arguments are evaluated before the call; the body then runs one level below it.
        const body = expr.fn ? (this.functions.get(expr.fn) ?? 0) + 1 : 0;
        return 1 + Math.max(body, this.deepest(expr.args));
      }
      case 'method':
        return 1 + Math.max(this.of(expr.object), this.deepest(expr.args));
      case 'unary':
      case 'is':
        return 1 + this.of(expr.operand);
      case 'binary':
        return 1 + Math.max(this.of(expr.left), this.of(expr.right));
      case 'ternary':
        return 1 + Math.max(this.of(expr.test), this.of(expr.then), this.of(expr.otherwise));
      case 'list':
        return 1 + this.deepest(expr.items);
      case 'map':
        return 1 + this.deepest(expr.entries.flat());
      case 'path':
        return 1 + this.deepest(expr.segments.flat().filter((part): part is Expr => typeof part !== 'string'));
    }
  }

  private deepest(exprs: Expr[]): number {
    let deepest = 0;
    for (const expr of exprs) deepest = Math.max(deepest, this.of(expr));
    return deepest;
  }
}
