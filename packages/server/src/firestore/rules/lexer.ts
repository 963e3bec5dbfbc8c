/**
 * Tokens of the rules language. The lexer is pulled by the parser one token at a time because
 * match paths (`/users/{id=**}`) and path literals (`/databases/$(db)/documents`) are read by
 * the parser straight from the characters: their segments are not tokens.
 */

export interface Position {
  line: number;
  column: number;
}

export type TokenKind = 'ident' | 'int' | 'float' | 'string' | 'bytes' | 'punct' | 'eof';

export interface Token extends Position {
  kind: TokenKind;
  /** Identifier, punctuation, or the literal's source text. */
  text: string;
  /** Decoded content of string and bytes literals. */
  value?: string | Buffer;
  offset: number;
}

/** A problem in the source, in the emulator's words; collected by the parser. */
export class RulesSyntaxError extends Error {
  constructor(
    readonly position: Position,
    message: string,
  ) {
    super(message);
  }
}

const punctuation = ['&&', '||', '==', '!=', '<=', '>=', '{', '}', '(', ')', '[', ']', ',', ';', ':', '.', '?', '!', '-', '+', '*', '/', '%', '<', '>', '='];

export class Lexer {
  offset = 0;
  line = 1;
  column = 1;

  constructor(readonly source: string) {}

  position(): Position {
    return { line: this.line, column: this.column };
  }

  peekChar(ahead = 0): string {
    return this.source[this.offset + ahead] ?? '';
  }

  advance(count = 1): void {
    for (let i = 0; i < count; i++) {
      if (this.source[this.offset] === '\n') {
        this.line++;
        this.column = 1;
      } else {
        this.column++;
      }
      this.offset++;
    }
  }

  skipSpaceAndComments(): void {
    for (;;) {
      const char = this.peekChar();
      if (char === ' ' || char === '\t' || char === '\n' || char === '\r') this.advance();
      else if (char === '/' && this.peekChar(1) === '/') {
        while (this.offset < this.source.length && this.peekChar() !== '\n') this.advance();
      } else if (char === '/' && this.peekChar(1) === '*') {
        const start = this.position();
        this.advance(2);
        while (this.offset < this.source.length && !(this.peekChar() === '*' && this.peekChar(1) === '/')) this.advance();
        if (this.offset >= this.source.length) throw new RulesSyntaxError(start, "Missing a closing '*/'");
        this.advance(2);
      } else return;
    }
  }

  /** The next token; the lexer is left after it. */
  next(): Token {
    this.skipSpaceAndComments();
    const start = { line: this.line, column: this.column, offset: this.offset };
    const char = this.peekChar();
    if (char === '') return { kind: 'eof', text: '<EOF>', ...start };
    const quoteAt = char === 'r' || char === 'b' ? this.peekChar(1) : char;
    if ((quoteAt === "'" || quoteAt === '"') && (char === quoteAt || /[rb]/.test(char))) return this.stringToken(start, char === quoteAt ? '' : char);
    if (/[A-Za-z_]/.test(char)) {
      let end = this.offset;
      while (/[A-Za-z0-9_]/.test(this.source[end] ?? '')) end++;
      const text = this.source.slice(this.offset, end);
      this.advance(end - this.offset);
      return { kind: 'ident', text, ...start };
    }
    if (/[0-9]/.test(char)) return this.numberToken(start);
    for (const symbol of punctuation) {
      if (this.source.startsWith(symbol, this.offset)) {
        this.advance(symbol.length);
        return { kind: 'punct', text: symbol, ...start };
      }
    }
    throw new RulesSyntaxError(start, `Unexpected '${char}'.`);
  }

  private numberToken(start: Position & { offset: number }): Token {
    const rest = this.source.slice(this.offset);
    // The emulator has no exponent-only floats (`1e3` is refused), but takes them after a fraction.
    const float = /^[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?/.exec(rest);
    const text = float ? float[0] : /^[0-9]+/.exec(rest)![0];
    this.advance(text.length);
    return { kind: float ? 'float' : 'int', text, ...start };
  }

  private stringToken(start: Position & { offset: number }, prefix: string): Token {
    this.advance(prefix.length);
    const quote = this.peekChar();
    this.advance();
    let value = '';
    const bytes: number[] = [];
    const raw = prefix === 'r';
    for (;;) {
      const char = this.peekChar();
      if (char === '' || char === '\n') throw new RulesSyntaxError(start, `Missing a closing ${quote}`);
      if (char === quote) {
        this.advance();
        break;
      }
      if (char === '\\' && !raw) {
        const escaped = this.readEscape(start);
        if (typeof escaped === 'number') {
          bytes.push(escaped);
          value += String.fromCharCode(escaped);
        } else {
          value += escaped;
          bytes.push(...Buffer.from(escaped));
        }
        continue;
      }
      const codePoint = this.source.codePointAt(this.offset)!;
      const text = String.fromCodePoint(codePoint);
      value += text;
      bytes.push(...Buffer.from(text));
      this.advance(text.length);
    }
    const text = this.source.slice(start.offset, this.offset);
    if (prefix === 'b') return { kind: 'bytes', text, value: Buffer.from(bytes), ...start };
    return { kind: 'string', text, value, ...start };
  }

  /** A backslash escape: text, or a byte (`\xFF`, octal) that only bytes literals keep as such. */
  private readEscape(start: Position): string | number {
    this.advance();
    const char = this.peekChar();
    const simple: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', a: '\x07', '\\': '\\', "'": "'", '"': '"', '`': '`', '?': '?' };
    if (char in simple) {
      this.advance();
      return simple[char]!;
    }
    const hex = (length: number) => {
      const digits = this.source.slice(this.offset + 1, this.offset + 1 + length);
      if (!new RegExp(`^[0-9a-fA-F]{${length}}$`).test(digits)) throw new RulesSyntaxError(start, `Invalid escape sequence '\\${char}'.`);
      this.advance(1 + length);
      return parseInt(digits, 16);
    };
    if (char === 'x' || char === 'X') return hex(2);
    if (char === 'u') return String.fromCodePoint(hex(4));
    if (char === 'U') return String.fromCodePoint(hex(8));
    if (/[0-3]/.test(char)) {
      const digits = this.source.slice(this.offset, this.offset + 3);
      if (!/^[0-7]{3}$/.test(digits)) throw new RulesSyntaxError(start, `Invalid escape sequence '\\${char}'.`);
      this.advance(3);
      return parseInt(digits, 8);
    }
    throw new RulesSyntaxError(start, `Invalid escape sequence '\\${char}'.`);
  }
}
