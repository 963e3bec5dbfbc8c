import type { AllowStatement, BinaryOp, Expr, FunctionDecl, LetBinding, MatchBlock, PathPart, PatternSegment, Ruleset } from './ast.js';
import { RulesSyntaxError, type Position, type Token } from './lexer.js';
import { TokenCursor } from './parser-tokens.js';
import { int64Max, int64Min } from './values.js';

export { maxNestingDepth } from './parser-tokens.js';

/**
 * A hand-written recursive-descent parser with CEL's precedence (loosest first):
 * `?:`, `||`, `&&`, relations (`== != < <= > >= in is`), `+ -`, `* / %`, unary `! -`, then
 * member, index, slice and call. It stops at the first syntax error (the emulator recovers and
 * may report more; the first is the one that matters).
 */
export function parseRuleset(source: string): Ruleset {
  return new Parser(source).ruleset();
}

const segmentChar = /[A-Za-z0-9_\-.~%@+=]/;


class Parser extends TokenCursor {

  ruleset(): Ruleset {
    if (this.token.kind === 'eof') throw new RulesSyntaxError({ line: 0, column: 0 }, 'Rules content empty. Compilation aborted.');
    let version: '1' | '2' = '1';
    let versionPos: Position | undefined;
    if (this.isIdent('rules_version')) {
      versionPos = this.pos();
      this.advance();
      this.expect('=');
      const literal = this.token;
      if (literal.kind !== 'string') throw this.unexpected();
      this.advance();
      if (literal.value !== '1' && literal.value !== '2') throw new RulesSyntaxError(versionPos, `Unsupported rules version ${String(literal.value)}.`);
      version = literal.value;
      this.accept(';');
    }
    if (!this.isIdent('service')) throw this.unexpected();
    const servicePos = this.pos();
    this.advance();
    let serviceName = this.identifier();
    while (this.accept('.')) serviceName += `.${this.identifier()}`;
    this.expect('{');
    const functions: FunctionDecl[] = [];
    const matches: MatchBlock[] = [];
    while (!this.isPunct('}')) {
      if (this.isIdent('function')) functions.push(this.functionDecl());
      else if (this.isIdent('match')) matches.push(this.matchBlock());
      else throw this.unexpected();
    }
    if (functions.length === 0 && matches.length === 0) throw new RulesSyntaxError(this.pos(), "The 'service' body must contain at least one declaration.");
    this.advance();
    if ((this.token as Token).kind !== 'eof') throw this.unexpected();
    return { version, versionPos, serviceName, servicePos, functions, matches };
  }

  // ---- declarations -------------------------------------------------------------------------

  private matchBlock(): MatchBlock {
    const pos = this.pos();
    this.enter();
    this.advance();
    const pathPos = this.pos();
    const path = this.matchPath();
    this.expect('{');
    const block: MatchBlock = { pos, path, pathPos, functions: [], matches: [], allows: [] };
    while (!this.isPunct('}')) {
      if (this.isIdent('function')) block.functions.push(this.functionDecl());
      else if (this.isIdent('match')) block.matches.push(this.matchBlock());
      else if (this.isIdent('allow')) block.allows.push(this.allow());
      else if (this.isPunct('/')) throw new RulesSyntaxError(this.pos(), "Missing 'match' keyword before path.");
      else throw this.unexpected();
    }
    this.advance();
    this.depth--;
    return block;
  }

  /** `/literal/{single}/{rest=**}`, read from the characters (segments are not tokens). */
  private matchPath(): PatternSegment[] {
    if (!this.isPunct('/')) throw this.unexpected();
    this.rewind();
    const lexer = this.lexer;
    const segments: PatternSegment[] = [];
    while (lexer.peekChar() === '/') {
      const pos = lexer.position();
      lexer.advance();
      const segmentPos = lexer.position();
      if (lexer.peekChar() === '{') {
        lexer.advance();
        const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(lexer.source.slice(lexer.offset))?.[0];
        if (!name) throw new RulesSyntaxError(lexer.position(), `Unexpected '${lexer.peekChar()}'.`);
        lexer.advance(name.length);
        if (lexer.source.startsWith('=**}', lexer.offset)) {
          lexer.advance(4);
          segments.push({ kind: 'rest', name, pos });
        } else if (lexer.peekChar() === '}') {
          lexer.advance();
          segments.push({ kind: 'single', name, pos });
        } else throw new RulesSyntaxError(lexer.position(), `Unexpected '${lexer.peekChar()}'.`);
      } else {
        const text = this.segmentText();
        if (text === '') throw new RulesSyntaxError(segmentPos, `Unexpected '${lexer.peekChar() || '<EOF>'}'.`);
        segments.push({ kind: 'literal', text, pos });
      }
    }
    this.token = lexer.next();
    return segments;
  }

  /** Path segment characters, with balanced parentheses so `(default)` is one segment. */
  private segmentText(): string {
    const lexer = this.lexer;
    let text = '';
    let depth = 0;
    for (;;) {
      const char = lexer.peekChar();
      const opens = char === '(' && (text === '' || depth > 0) && lexer.peekChar(1) !== '$';
      if (segmentChar.test(char) || opens || (char === ')' && depth > 0)) {
        if (char === '(') depth++;
        if (char === ')') depth--;
        text += char;
        lexer.advance();
      } else return text;
    }
  }

  private allow(): AllowStatement {
    const pos = this.pos();
    this.advance();
    const methods = [{ name: this.identifier(), pos: this.lastPos }];
    while (this.accept(',')) methods.push({ name: this.identifier(), pos: this.lastPos });
    let condition: Expr | undefined;
    let conditionText: string | undefined;
    if (this.accept(':')) {
      if (!this.isIdent('if')) throw new RulesSyntaxError(this.pos(), "Missing 'if' before conditional expression.");
      this.advance();
      const start = this.token.offset;
      condition = this.expression();
      // The condition as written, for explaining decisions (the console's playground).
      conditionText = this.lexer.source.slice(start, this.token.offset).trim();
    }
    this.accept(';');
    return { pos, methods, condition, ...(conditionText === undefined ? {} : { conditionText }) };
  }

  private functionDecl(): FunctionDecl {
    this.advance();
    const pos = this.pos();
    const name = this.identifier();
    this.expect('(');
    const params: FunctionDecl['params'] = [];
    if (!this.isPunct(')')) {
      do params.push({ name: this.identifier(), pos: this.lastPos });
      while (this.accept(','));
    }
    this.expect(')');
    this.expect('{');
    const lets: LetBinding[] = [];
    while (this.isIdent('let')) {
      this.advance();
      const letPos = this.pos();
      const letName = this.identifier();
      this.expect('=');
      lets.push({ name: letName, pos: letPos, value: this.expression() });
      this.expect(';');
    }
    if (!this.isIdent('return')) throw this.unexpected();
    this.advance();
    const body = this.expression();
    this.accept(';');
    this.expect('}');
    return { name, pos, params, lets, body, frameSize: params.length + lets.length };
  }

  // ---- expressions ----------------------------------------------------------------------------

  private expression(): Expr {
    this.enter();
    const expr = this.conditional();
    this.depth--;
    return expr;
  }

  private conditional(): Expr {
    const test = this.binary(0);
    if (!this.accept('?')) return test;
    const then = this.expression();
    this.expect(':');
    return { kind: 'ternary', pos: test.pos, test, then, otherwise: this.expression() };
  }

  private static readonly levels: readonly (readonly string[])[] = [['||'], ['&&'], ['==', '!=', '<', '<=', '>', '>=', 'in', 'is'], ['+', '-'], ['*', '/', '%']];

  private binary(level: number): Expr {
    if (level === Parser.levels.length) return this.unary();
    let left = this.binary(level + 1);
    // Each operator of a chain puts the tree so far one level down.
    const start = this.depth;
    for (;;) {
      const op = this.token.kind === 'punct' || this.token.kind === 'ident' ? this.token.text : '';
      if (!Parser.levels[level]!.includes(op) || (this.token.kind === 'ident' && op !== 'in' && op !== 'is')) {
        this.depth = start;
        return left;
      }
      this.enter();
      this.advance();
      if (op === 'is') {
        const typeName = this.identifier();
        left = { kind: 'is', pos: left.pos, operand: left, typeName };
        continue;
      }
      const right = this.binary(level + 1);
      left = { kind: 'binary', pos: left.pos, op: op as BinaryOp, left, right };
    }
  }

  private unary(): Expr {
    const pos = this.pos();
    if (this.accept('!')) return { kind: 'unary', pos, op: '!', operand: this.operand() };
    if (this.accept('-')) {
      if (this.token.kind === 'int' && BigInt(this.token.text) === -int64Min) {
        this.advance();
        return this.postfix({ kind: 'literal', pos, value: int64Min });
      }
      return { kind: 'unary', pos, op: '-', operand: this.operand() };
    }
    return this.postfix(this.primary());
  }

  /** A unary operator's operand: one level down. */
  private operand(): Expr {
    this.enter();
    const operand = this.unary();
    this.depth--;
    return operand;
  }

  private postfix(expr: Expr): Expr {
    // Each member, index or call puts the tree so far one level down.
    const start = this.depth;
    for (;;) {
      if (this.isPunct('.') || this.isPunct('[')) this.enter();
      if (this.accept('.')) {
        const name = this.identifier();
        if (this.accept('(')) expr = { kind: 'method', pos: expr.pos, object: expr, name, args: this.args() };
        else expr = { kind: 'member', pos: expr.pos, object: expr, name };
      } else if (this.accept('[')) {
        const start = this.isPunct(':') ? undefined : this.expression();
        if (this.accept(':')) {
          const end = this.isPunct(']') ? undefined : this.expression();
          expr = { kind: 'slice', pos: expr.pos, object: expr, start, end };
        } else expr = { kind: 'index', pos: expr.pos, object: expr, index: start! };
        this.expect(']');
      } else {
        this.depth = start;
        return expr;
      }
    }
  }

  private args(): Expr[] {
    const args: Expr[] = [];
    if (!this.isPunct(')')) {
      do args.push(this.expression());
      while (this.accept(','));
    }
    this.expect(')');
    return args;
  }

  private primary(): Expr {
    const token = this.token;
    const pos = this.pos();
    switch (token.kind) {
      case 'int': {
        const value = BigInt(token.text);
        if (value > int64Max) throw new RulesSyntaxError(pos, `Invalid number literal ${token.text}.`);
        this.advance();
        return { kind: 'literal', pos, value };
      }
      case 'float':
        this.advance();
        return { kind: 'literal', pos, value: Number(token.text) };
      case 'string':
      case 'bytes':
        this.advance();
        return { kind: 'literal', pos, value: token.value! };
      case 'ident': {
        this.advance();
        if (token.text === 'true' || token.text === 'false') return { kind: 'literal', pos, value: token.text === 'true' };
        if (token.text === 'null') return { kind: 'literal', pos, value: null };
        if (this.accept('(')) return { kind: 'call', pos, name: token.text, args: this.args() };
        return { kind: 'ident', pos, name: token.text };
      }
      case 'punct':
        if (this.accept('(')) {
          const inner = this.expression();
          this.expect(')');
          return inner;
        }
        if (this.accept('[')) {
          const items: Expr[] = [];
          while (!this.isPunct(']')) {
            items.push(this.expression());
            if (!this.accept(',')) break;
          }
          this.expect(']');
          return { kind: 'list', pos, items };
        }
        if (this.accept('{')) {
          const entries: [Expr, Expr][] = [];
          while (!this.isPunct('}')) {
            const key = this.expression();
            this.expect(':');
            entries.push([key, this.expression()]);
            if (!this.accept(',')) break;
          }
          this.expect('}');
          return { kind: 'map', pos, entries };
        }
        if (this.isPunct('/')) return this.pathLiteral();
    }
    throw this.unexpected();
  }

  /** `/databases/$(database)/documents/users/$(uid)`: each segment is text and `$(expr)` parts. */
  private pathLiteral(): Expr {
    const pos = this.pos();
    this.rewind();
    const lexer = this.lexer;
    const segments: PathPart[][] = [];
    while (lexer.peekChar() === '/') {
      lexer.advance();
      const parts: PathPart[] = [];
      for (;;) {
        const text = this.segmentText();
        if (text) parts.push(text);
        if (lexer.peekChar() !== '$' || lexer.peekChar(1) !== '(') break;
        lexer.advance(2);
        this.token = lexer.next();
        parts.push(this.expression());
        if (!this.isPunct(')')) throw this.unexpected();
      }
      if (parts.length === 0) throw new RulesSyntaxError(lexer.position(), `Unexpected '${lexer.peekChar() || '<EOF>'}'.`);
      segments.push(parts);
    }
    this.token = lexer.next();
    return { kind: 'path', pos, segments };
  }
}
