import { Lexer, RulesSyntaxError, type Position, type Token } from './lexer.js';

/**
 * How deep a ruleset may nest: match blocks in match blocks, and in expressions every bracket,
 * operand, argument, member, index and operator of a chain (`a && b && c` is three levels, as its
 * tree is). The parser and every pass over the tree recurse that deep; past this bound a source is
 * refused with an error at the place it went too deep, not a stack overflow. Real rules stay far
 * below it (CEL parsers bound recursion at 250 likewise).
 */
export const maxNestingDepth = 250;

/** The parser's place in the token stream (parser.ts reads the grammar through it), and its nesting. */
export class TokenCursor {
  protected readonly lexer: Lexer;
  protected token: Token;
  /** The current nesting (maxNestingDepth); restored on the way out, not after an error (parsing stops there). */
  protected depth = 0;

  constructor(source: string) {
    this.lexer = new Lexer(source);
    this.token = this.lexer.next();
  }

  /** One level deeper; refused past maxNestingDepth, at the token where it happens. */
  protected enter(): void {
    if (++this.depth > maxNestingDepth) throw new RulesSyntaxError(this.pos(), `Rules nested too deeply: more than ${maxNestingDepth} levels of blocks and expressions.`);
  }

  protected lastPos: Position = { line: 1, column: 1 };

  protected pos(): Position {
    return { line: this.token.line, column: this.token.column };
  }

  protected advance(): void {
    this.lastPos = this.pos();
    this.token = this.lexer.next();
  }

  /** Puts the lexer back before the current token, for paths read from characters. */
  protected rewind(): void {
    this.lexer.offset = this.token.offset;
    this.lexer.line = this.token.line;
    this.lexer.column = this.token.column;
  }

  protected isPunct(text: string): boolean {
    return this.token.kind === 'punct' && this.token.text === text;
  }

  protected isIdent(text: string): boolean {
    return this.token.kind === 'ident' && this.token.text === text;
  }

  protected accept(text: string): boolean {
    if (!this.isPunct(text)) return false;
    this.advance();
    return true;
  }

  protected expect(text: string): void {
    if (!this.accept(text)) throw new RulesSyntaxError(this.pos(), `mismatched input '${this.token.text}' expecting '${text}'`);
  }

  protected identifier(): string {
    if (this.token.kind !== 'ident') throw new RulesSyntaxError(this.pos(), `mismatched input '${this.token.text}' expecting IDENTIFIER`);
    const name = this.token.text;
    this.advance();
    return name;
  }

  protected unexpected(): RulesSyntaxError {
    return new RulesSyntaxError(this.pos(), `Unexpected '${this.token.text}'.`);
  }
}
