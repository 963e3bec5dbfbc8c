import type { Expr, PatternSegment } from './ast.js';
import type { RulesDecidingAllow, RulesMethod } from './types.js';
import { RulesPath, Unknown, type RulesValue } from './values.js';

/**
 * Which `match` blocks apply to a path. Every block with allow statements is flattened to its
 * full pattern (`/databases/{database}/documents/users/{uid}`); a block applies only to paths its
 * whole pattern matches (rules never cascade to subcollections unless a `**` spans them).
 * Blocks are indexed by the literal that names the first collection, so a request only tries
 * the blocks that can match it.
 */

export interface CompiledAllow {
  methods: number;
  methodNames: string[];
  condition?: Expr;
  line: number;
  /** Where it is and what it says, made once at compile time for decisions to point at. */
  explanation: RulesDecidingAllow;
}

export interface CompiledMatch {
  pattern: PatternSegment[];
  allows: CompiledAllow[];
  /** Source order, kept when candidates from two buckets are merged. */
  order: number;
  wildcardCount: number;
}

const bit: Record<RulesMethod, number> = { get: 1, list: 2, create: 4, update: 8, delete: 16 };
export const methodBits: Record<string, number> = { ...bit, read: bit.get | bit.list, write: bit.create | bit.update | bit.delete };
export function methodBit(method: RulesMethod): number {
  return bit[method];
}

/** A match block's full pattern as written: `/databases/{database}/documents/users/{uid}/{rest=**}`. */
export function patternText(pattern: readonly PatternSegment[]): string {
  return pattern.map((segment) => (segment.kind === 'literal' ? `/${segment.text}` : segment.kind === 'single' ? `/{${segment.name}}` : `/{${segment.name}=**}`)).join('');
}

/** A segment a list query leaves open: the document id, or the id of a collection group's parents. */
export const unknownSegment: unique symbol = Symbol('unknown segment');
export type PathSegment = string | typeof unknownSegment;

/** `databases/{db}/documents/<collection>`: the index key is the segment after `documents`. */
const keyedSegment = 3;
const maxCachedKeys = 1000;

export class MatchIndex {
  private readonly byKey = new Map<string, CompiledMatch[]>();
  private readonly unkeyed: CompiledMatch[] = [];
  private readonly mergedByKey = new Map<string, CompiledMatch[]>();

  constructor(
    readonly all: readonly CompiledMatch[],
    readonly version: '1' | '2',
  ) {
    for (const match of all) {
      const head = match.pattern.slice(0, keyedSegment + 1);
      const keyed = head.length === keyedSegment + 1 && head.every((segment) => segment.kind !== 'rest') && head[keyedSegment]!.kind === 'literal';
      if (keyed) {
        const key = (head[keyedSegment] as { text: string }).text;
        let bucket = this.byKey.get(key);
        if (!bucket) this.byKey.set(key, (bucket = []));
        bucket.push(match);
      } else this.unkeyed.push(match);
    }
  }

  /** The blocks that may match a path whose first collection is `key`, in source order. */
  candidates(key: string | undefined): readonly CompiledMatch[] {
    if (key === undefined) return this.all;
    let merged = this.mergedByKey.get(key);
    if (!merged) {
      merged = [...(this.byKey.get(key) ?? []), ...this.unkeyed].sort((a, b) => a.order - b.order);
      if (this.mergedByKey.size >= maxCachedKeys) this.mergedByKey.clear();
      this.mergedByKey.set(key, merged);
    }
    return merged;
  }
}

/**
 * The wildcard values (by slot) if `pattern` matches the whole path, else undefined. `{x}` binds
 * a string, `{x=**}` a path; an unknown segment binds Unknown (reading it denies).
 */
export function matchPattern(pattern: readonly PatternSegment[], path: readonly PathSegment[], version: '1' | '2'): RulesValue[] | undefined {
  const values: RulesValue[] = [];
  return matchFrom(pattern, 0, path, 0, version, values) ? values : undefined;
}

function matchFrom(pattern: readonly PatternSegment[], pi: number, path: readonly PathSegment[], si: number, version: '1' | '2', values: RulesValue[]): boolean {
  for (; pi < pattern.length; pi++, si++) {
    const segment = pattern[pi]!;
    if (segment.kind === 'rest') {
      const slot = values.length;
      // Version 1: one or more segments, and only at the end (checked at compile time).
      const minimum = version === '1' ? 1 : 0;
      for (let length = path.length - si; length >= minimum; length--) {
        const spanned = path.slice(si, si + length);
        values[slot] = spanned.includes(unknownSegment) ? new Unknown('path') : new RulesPath(spanned as string[]);
        if (matchFrom(pattern, pi + 1, path, si + length, version, values)) return true;
        values.length = slot;
      }
      return false;
    }
    if (si >= path.length) return false;
    const actual = path[si]!;
    if (segment.kind === 'literal') {
      if (actual !== segment.text) return false;
    } else values.push(actual === unknownSegment ? new Unknown(segment.name) : actual);
  }
  return si === path.length;
}

/**
 * For a collection-group query, a pattern applies only if it matches every document the group
 * can hold: `<parent>/<any number of segments>/<collectionId>/<id>`. So it needs a `**`; what
 * comes before it must match within the parent, and what comes after it must match the
 * `<collectionId>/<id>` tail (`/{path=**}/posts/{p}` covers a group query on posts,
 * `/users/{u}/posts/{p}` does not).
 */
export function matchGroupPattern(pattern: readonly PatternSegment[], parent: readonly string[], collectionId: string): RulesValue[] | undefined {
  const restAt = pattern.findIndex((segment) => segment.kind === 'rest');
  if (restAt < 0) return undefined;
  const before = pattern.slice(0, restAt);
  const after = pattern.slice(restAt + 1);
  if (before.length > parent.length || after.length > 2) return undefined;
  const head = matchPattern(before, parent.slice(0, before.length), '2');
  const tail = matchPattern(after, ([collectionId, unknownSegment] as PathSegment[]).slice(2 - after.length), '2');
  if (!head || !tail) return undefined;
  return [...head, new Unknown('path'), ...tail];
}
