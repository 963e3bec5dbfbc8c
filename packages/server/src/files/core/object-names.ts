/**
 * Which bucket and object names Hearth takes. Names never reach the file system or an S3 key (blobs
 * have random keys), so these checks are Google's limits plus what would confuse a path: 1 to 1024
 * bytes of UTF-8, no control characters, no `.` or `..` segment, no ACME challenge paths.
 */
export function objectNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'The object name is empty.';
  if (Buffer.byteLength(name) > 1024) return 'The object name is longer than 1024 bytes.';
  if (!isWellFormed(name)) return 'The object name is not valid UTF-8.';
  if (hasControlCharacter(name)) return 'The object name contains a control character.';
  if (name.split('/').some((segment) => segment === '.' || segment === '..')) return "The object name contains a '.' or '..' segment.";
  if (name.startsWith('.well-known/acme-challenge/')) return 'The object name is reserved.';
  return undefined;
}

/** Google's bucket names: 3 to 222 characters of lowercase letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit. */
export function isBucketName(bucket: string): boolean {
  return bucket.length >= 3 && bucket.length <= 222 && /^[a-z0-9][a-z0-9._-]*[a-z0-9]$/.test(bucket) && !bucket.includes('..');
}

/**
 * The project a bucket belongs to: Firebase's default buckets name it (`<project>.appspot.com`,
 * `<project>.firebasestorage.app`); any other bucket is the default project's.
 */
export function projectOfBucket(bucket: string, defaultProjectId: string): string {
  const match = /^([a-z0-9-]{4,30})\.(appspot\.com|firebasestorage\.app)$/.exec(bucket);
  return match ? match[1]! : defaultProjectId;
}

/** The least string after every string that starts with `prefix`, in UTF-8 byte order (undefined: none). */
export function afterPrefix(prefix: string): string | undefined {
  const chars = [...prefix];
  while (chars.length) {
    const last = chars.pop()!.codePointAt(0)!;
    if (last === 0x10ffff) continue;
    const next = last === 0xd7ff ? 0xe000 : last + 1;
    return chars.join('') + String.fromCodePoint(next);
  }
  return undefined;
}

// eslint-disable-next-line no-control-regex
const controlCharacter = /[\u0000-\u001f\u007f]/;

export function hasControlCharacter(text: string): boolean {
  return controlCharacter.test(text);
}

/**
 * The least string after `name` that an object could be named: no name holds a control character,
 * so `name + U+0001` sorts after `name` and before every longer name that starts with it (U+0000
 * would too, but PostgreSQL's text cannot hold it).
 */
export function justAfter(name: string): string {
  return `${name}\u0001`;
}

/** No lone surrogate: the text has a UTF-8 form. */
export function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}
