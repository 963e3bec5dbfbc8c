/** Field names whose values never reach the audit log: secrets, and what would let one replay a request. */
const secretName = /pass|hash|salt|token|secret|key|credential|code|otp|signature|private|cookie|session/i;

const maxSummaryChars = 1000;
const maxStringChars = 120;
const maxDepth = 6;

/**
 * What a change carried, for the audit log: the route, then the body as compact JSON with every
 * secret-looking field's value (booleans excepted) replaced by "[redacted]" (at any depth, in arrays too) and long
 * strings cut, so the log shows what was done without becoming a second copy of the secrets.
 */
export function auditSummary(route: string, body: unknown): string {
  const shown = body === undefined || body === null || (typeof body === 'object' && Object.keys(body).length === 0) ? '' : ` ${JSON.stringify(redact(body, 0))}`;
  const summary = `${route}${shown}`;
  return summary.length > maxSummaryChars ? `${summary.slice(0, maxSummaryChars - 1)}…` : summary;
}

function redact(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.length > maxStringChars ? `${value.slice(0, maxStringChars)}…` : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= maxDepth) return '…';
  if (Array.isArray(value)) return value.slice(0, 20).map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  // A switch is never a secret (passwordRequired: false says what changed, and replays nothing).
  for (const [name, item] of Object.entries(value)) out[name] = secretName.test(name) && typeof item !== 'boolean' ? '[redacted]' : redact(item, depth + 1);
  return out;
}
