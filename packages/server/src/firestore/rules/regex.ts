import { fault } from './values.js';

/**
 * RE2 patterns (what `string.matches`, `replace` and `split` take) translated to JavaScript
 * RegExps with the `u` flag. RE2 has no backreferences, lookaround, `\C` or possessive and atomic
 * forms; the emulator refuses them ("Invalid regular expression pattern. Pattern: (a)\1."), and
 * so does this translation rather than guess. Translations are cached per pattern.
 */

const cache = new Map<string, RegExp | string>();
const maxCached = 1000;

const posixClasses: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const syntaxChars = new Set('^$\\.*+?()[]{}|/'.split(''));

export function invalidPattern(pattern: string) {
  return fault(`Invalid regular expression pattern. Pattern: ${pattern}.`);
}

/** The RegExp for an RE2 pattern: `full` anchors it at both ends (matches), else it finds (replace, split). */
export function compileRe2(pattern: string, full: boolean): RegExp {
  const key = `${full ? 'F' : 'P'}${pattern}`;
  let cached = cache.get(key);
  if (cached === undefined) {
    try {
      const { source, flags } = translate(pattern);
      cached = new RegExp(full ? `^(?:${source})$` : source, `u${flags}${full ? '' : 'g'}`);
    } catch {
      cached = pattern;
    }
    if (cache.size >= maxCached) cache.clear();
    cache.set(key, cached);
  }
  if (typeof cached === 'string') throw invalidPattern(pattern);
  if (!full) cached.lastIndex = 0;
  return cached;
}

function translate(pattern: string): { source: string; flags: string } {
  let i = 0;
  let flags = '';
  // Leading flag groups: (?i), (?s), (?m), (?is)...
  for (let lead = /^\(\?([imsU]+)\)/.exec(pattern); lead; lead = /^\(\?([imsU]+)\)/.exec(pattern.slice(i))) {
    for (const flag of lead[1]!) {
      if (flag === 'U') throw new Error('ungreedy');
      if (!flags.includes(flag)) flags += flag;
    }
    i += lead[0].length;
  }
  let out = '';
  while (i < pattern.length) {
    const char = pattern[i]!;
    if (char === '\\') {
      const [text, length] = escape(pattern, i, false);
      out += text;
      i += length;
    } else if (char === '[') {
      const [text, length] = charClass(pattern, i);
      out += text;
      i += length;
    } else if (char === '(') {
      if (pattern[i + 1] === '?') {
        const rest = pattern.slice(i + 2);
        const named = /^P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
        if (named) {
          out += `(?<${named[1]}>`;
          i += 2 + named[0].length;
        } else if (rest.startsWith(':')) {
          out += '(?:';
          i += 3;
        } else throw new Error('group');
      } else {
        out += '(';
        i++;
      }
    } else if ((char === '+' || char === '*' || char === '?' || char === '}') && pattern[i + 1] === '+') {
      throw new Error('possessive');
    } else {
      out += char;
      i++;
    }
  }
  return { source: out, flags };
}

/** One escape at `at` (a backslash): its JavaScript text and how many pattern characters it took. */
function escape(pattern: string, at: number, inClass: boolean): [string, number] {
  const next = pattern[at + 1];
  if (next === undefined) throw new Error('trailing backslash');
  if ('dDwWsS'.includes(next)) return [`\\${next}`, 2];
  if (!inClass && 'bB'.includes(next)) return [`\\${next}`, 2];
  if (!inClass && next === 'A') return ['^', 2];
  if (!inClass && next === 'z') return ['$', 2];
  if ('nrtfv'.includes(next)) return [`\\${next}`, 2];
  if (next === 'a') return ['\\x07', 2];
  if (next === 'p' || next === 'P') {
    const braced = /^\{\^?([A-Za-z_]+)\}/.exec(pattern.slice(at + 2));
    const name = braced ? braced[1]! : pattern[at + 2];
    if (!name || !/^[A-Za-z_]+$/.test(name)) throw new Error('class');
    const negate = braced?.[0].startsWith('{^') ? (next === 'p' ? 'P' : 'p') : next;
    const property = name.length <= 2 ? name : `Script=${name}`;
    return [`\\${negate}{${property}}`, 2 + (braced ? braced[0].length : 1)];
  }
  if (next === 'x') {
    const braced = /^\{([0-9A-Fa-f]+)\}/.exec(pattern.slice(at + 2));
    if (braced) return [`\\u{${braced[1]}}`, 2 + braced[0].length];
    const two = /^[0-9A-Fa-f]{2}/.exec(pattern.slice(at + 2));
    if (!two) throw new Error('hex');
    return [`\\x${two[0]}`, 4];
  }
  if (next === 'Q') {
    const end = pattern.indexOf('\\E', at + 2);
    const literal = pattern.slice(at + 2, end < 0 ? undefined : end);
    return [[...literal].map((char) => literalChar(char, inClass)).join(''), 2 + literal.length + (end < 0 ? 0 : 2)];
  }
  if (/[0-9]/.test(next)) {
    if (next === '0') return ['\\0', 2];
    throw new Error('backreference');
  }
  if (/[A-Za-z]/.test(next)) throw new Error(`escape \\${next}`);
  return [literalChar(next, inClass), 2];
}

/** JavaScript's `u` mode allows escaping only syntax characters (and `-` inside a class). */
function literalChar(char: string, inClass = false): string {
  if (syntaxChars.has(char) || (inClass && char === '-')) return `\\${char}`;
  return char;
}

function charClass(pattern: string, at: number): [string, number] {
  let i = at + 1;
  let out = '[';
  if (pattern[i] === '^') {
    out += '^';
    i++;
  }
  let first = true;
  while (i < pattern.length && (pattern[i] !== ']' || first)) {
    first = false;
    const posix = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(i));
    if (posix) {
      const range = posixClasses[posix[2]!];
      if (!range || posix[1]) throw new Error('posix');
      out += range;
      i += posix[0].length;
    } else if (pattern[i] === '\\') {
      const [text, length] = escape(pattern, i, true);
      out += text;
      i += length;
    } else if (pattern[i] === '[' || pattern[i] === ']') {
      out += `\\${pattern[i]}`;
      i++;
    } else {
      out += pattern[i];
      i++;
    }
  }
  if (pattern[i] !== ']') throw new Error('unclosed class');
  return [`${out}]`, i + 1 - at];
}
