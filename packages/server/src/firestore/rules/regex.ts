import { RE2JS } from 're2js';
import { fault } from './values.js';

/**
 * The patterns of `string.matches`, `replace` and `split`, run by re2js: RE2's syntax and RE2's
 * linear-time engine (a port of RE2/J, the Java RE2 Google's emulator runs), so no value a client
 * writes can make a match backtrack. JavaScript's RegExp took 0.4 s for 22 letters against
 * `^([a-zA-Z]+ ?)*$`, twice as long per letter more; re2js takes 0.06 ms for 1,000 letters and
 * 6 ms for 100,000 (docs/ARCHITECTURE.md). Constructs RE2 lacks (backreferences, lookaround,
 * `\C`, possessive repeats, `\Z`) are refused with the emulator's message, at compile time for a
 * literal pattern (compile.ts) and as an evaluation error otherwise. `replace` and `split` follow
 * what the emulator answers (probed, emulator 1.19.9): Java's replacement syntax (`$1`, `${name}`,
 * `\` quoting) and Java's split (a leading empty piece is kept, trailing empty pieces dropped).
 */

/** Compiled patterns by text, least recently used out first. */
const cache = new Map<string, RE2JS | null>();
const maxCached = 1000;
/** Longer patterns (only a document's value can be that long) are compiled per use, not kept. */
const maxCachedPatternChars = 4096;

export function invalidPattern(pattern: string) {
  return fault(`Invalid regular expression pattern. Pattern: ${pattern}.`);
}

/** The compiled pattern; throws the emulator's evaluation error for a pattern RE2 refuses. */
export function compileRe2(pattern: string): RE2JS {
  let compiled = cache.get(pattern);
  if (compiled === undefined) {
    try {
      compiled = RE2JS.compile(pattern);
    } catch {
      compiled = null;
    }
    if (pattern.length <= maxCachedPatternChars) {
      if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
      cache.set(pattern, compiled);
    }
  } else {
    // Most recently used last.
    cache.delete(pattern);
    cache.set(pattern, compiled);
  }
  if (compiled === null) throw invalidPattern(pattern);
  return compiled;
}

/** Is the pattern one RE2 accepts? (The compiler's check of literal patterns.) */
export function isValidRe2(pattern: string): boolean {
  try {
    compileRe2(pattern);
    return true;
  } catch {
    return false;
  }
}

/** `text.matches(pattern)`: the whole text. */
export function fullMatch(text: string, pattern: string): boolean {
  return compileRe2(pattern).matches(text);
}

/** `text.replace(pattern, replacement)`: every match, left to right, as Java's Matcher.replaceAll. */
export function replaceAll(text: string, pattern: string, replacement: string): string {
  const matcher = compileRe2(pattern).matcher(text);
  let out = '';
  let last = 0;
  while (matcher.find()) {
    out += text.slice(last, matcher.start()) + expand(replacement, matcher, pattern);
    last = matcher.end();
  }
  return out + text.slice(last);
}

/** `text.split(pattern)`: the pieces between matches; trailing empty pieces are dropped, as Java's split. */
export function split(text: string, pattern: string): string[] {
  const matcher = compileRe2(pattern).matcher(text);
  const pieces: string[] = [];
  let last = 0;
  while (matcher.find()) {
    pieces.push(text.slice(last, matcher.start()));
    last = matcher.end();
  }
  if (pieces.length === 0) return [text];
  pieces.push(text.slice(last));
  while (pieces.length > 0 && pieces[pieces.length - 1] === '') pieces.pop();
  return pieces;
}

type Matcher = ReturnType<RE2JS['matcher']>;

/**
 * A replacement for one match, as RE2/J's appendReplacement reads it: `\x` is `x`, `$n` the
 * longest group number that exists, `${name}` a named group; a `$` or `\` that ends the text is
 * itself. A group that does not exist is an evaluation error (the emulator answers 500 there).
 */
function expand(replacement: string, matcher: Matcher, pattern: string): string {
  const groups = matcher.groupCount();
  let out = '';
  let last = 0;
  for (let i = 0; i < replacement.length - 1; i++) {
    const char = replacement[i];
    if (char === '\\') {
      out += replacement.slice(last, i);
      last = ++i;
      continue;
    }
    if (char !== '$') continue;
    const next = replacement[i + 1]!;
    if (next >= '0' && next <= '9') {
      out += replacement.slice(last, i);
      let group = Number(next);
      for (i += 2; i < replacement.length; i++) {
        const digit = replacement.charCodeAt(i) - 48;
        if (digit < 0 || digit > 9 || group * 10 + digit > groups) break;
        group = group * 10 + digit;
      }
      if (group > groups) throw fault(`Invalid replacement: the pattern ${pattern} has no group ${group}.`);
      out += matcher.group(group) ?? '';
      last = i;
      i--;
    } else if (next === '{') {
      out += replacement.slice(last, i);
      const close = replacement.indexOf('}', i + 2);
      const name = close < 0 ? '' : replacement.slice(i + 2, close);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || !(name in matcher.getNamedGroups())) {
        throw fault(`Invalid replacement: the pattern ${pattern} has no group named ${name}.`);
      }
      out += matcher.group(name) ?? '';
      last = close + 1;
      i = close;
    }
  }
  return out + replacement.slice(last);
}
