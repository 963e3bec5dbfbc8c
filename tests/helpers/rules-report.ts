/**
 * Reports of the security-rules differential test: differences grouped by kind (so one bug met a hundred times
 * does not hide another met once), the first of each kind shrunk to the fewest allow statements and seed documents
 * that still show it, and a listing of every case for RULES_DIFF_VERBOSE.
 */
import type { RulesCase } from './rules-requests.js';
import { judgeOnce, numbered, stepStatuses, type CaseResult, type Difference, type Ruleset } from './rules-run.js';
import type { RulesServers } from './rules-servers.js';

/** Whether a write's precondition fails on the seed (a create of a stored document, an update of a missing one). */
function preconditionFailsOnSeed(ruleset: Ruleset, rulesCase: RulesCase): boolean {
  const { operation } = rulesCase;
  if (operation.kind !== 'commit' && operation.kind !== 'transaction') return false;
  return operation.writes.some((write) => (write.op === 'create' && ruleset.seed[write.path] !== undefined) || (write.op === 'update' && ruleset.seed[write.path] === undefined));
}

/** What kind of difference it is: the request's kind, both answers' statuses, and whether a precondition fails. */
export function kindOf(difference: Difference): string {
  const statuses = (outcome: string) => stepStatuses(outcome).join('/');
  const precondition = preconditionFailsOnSeed(difference.ruleset, difference.rulesCase) ? ' (a precondition fails on the seed)' : '';
  return `${difference.rulesCase.operation.kind}: emulator ${statuses(difference.oracle.outcome)}, subject ${statuses(difference.subject.outcome)}${precondition}`;
}

function reportDifference(difference: Difference, subjectLabel: string): string {
  const { ruleset, index, rulesCase, oracle, subject } = difference;
  const seed = Object.entries(ruleset.seed).map(([path, fields]) => `    ${path} ${JSON.stringify(fields)}`);
  return [
    `ruleset "${ruleset.name}", case #${index}${rulesCase.note ? ` (${rulesCase.note})` : ''}`,
    `  caller: ${rulesCase.caller ?? 'signed out'}`,
    `  request: ${JSON.stringify(rulesCase.operation)}`,
    `  emulator: ${oracle.outcome}${oracle.messages.length ? `   [${oracle.messages.join(' | ')}]` : ''}`,
    `  ${subjectLabel}: ${subject.outcome}${subject.messages.length ? `   [${subject.messages.join(' | ')}]` : ''}`,
    `  rules:\n${numbered(ruleset.rules)}`,
    `  seed:\n${seed.join('\n')}`,
  ].join('\n');
}

function briefly(difference: Difference, subjectLabel: string): string {
  const { ruleset, index, rulesCase, oracle, subject } = difference;
  return `ruleset "${ruleset.name}" case #${index}: ${rulesCase.caller ?? 'signed out'} ${JSON.stringify(rulesCase.operation).slice(0, 240)}: emulator ${oracle.outcome}, ${subjectLabel} ${subject.outcome}`;
}

/** The first difference of each kind in full, then every other one a line each, by kind. */
export function reportDifferences(differences: Difference[], subjectLabel: string, kindsInFull = 6): string {
  const byKind = new Map<string, Difference[]>();
  for (const difference of differences) byKind.set(kindOf(difference), [...(byKind.get(kindOf(difference)) ?? []), difference]);
  const kinds = [...byKind.entries()];
  const lines = [`${differences.length} difference(s) between the emulator and ${subjectLabel}, of ${kinds.length} kind(s):`, ...kinds.map(([kind, members]) => `  ${members.length} x ${kind}`)];
  for (const [position, [kind, members]] of kinds.entries()) {
    lines.push('', `--- ${kind}: ${members.length} case(s)`);
    const [first, ...rest] = members;
    lines.push(position < kindsInFull ? reportDifference(first!, subjectLabel) : briefly(first!, subjectLabel));
    for (const other of rest.slice(0, 10)) lines.push(briefly(other, subjectLabel));
    if (rest.length > 10) lines.push(`... and ${rest.length - 10} more of this kind`);
  }
  return lines.join('\n');
}

/** Every case one line with what the emulator answered, to read a corpus's meaning off. */
export function listResults(results: CaseResult[]): string {
  return results
    .map((r) => `${r.ruleset.name} #${r.index} ${r.rulesCase.caller ?? 'signed out'} ${JSON.stringify(r.rulesCase.operation)}${r.rulesCase.note ? ` (${r.rulesCase.note})` : ''}\n    => ${r.oracle.outcome}${r.oracle.messages.length ? `   [${r.oracle.messages.join(' | ').replace(/\n/g, ' ')}]` : ''}`)
    .join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Shrinking

/**
 * The same difference with as few allow statements and seed documents as still show it (same two outcomes), each
 * attempt on fresh projects named after `projectPrefix`. Returns the difference unchanged when nothing can go.
 */
export async function shrinkDifference(servers: RulesServers, difference: Difference, projectPrefix: string, budget = 60): Promise<Difference> {
  let attempt = 0;
  const stillDiffers = async (candidate: Ruleset) => {
    const outcomes = await judgeOnce(servers, candidate, difference.rulesCase, `${projectPrefix}-${attempt++}`);
    return outcomes !== undefined && outcomes[0].outcome === difference.oracle.outcome && outcomes[1].outcome === difference.subject.outcome ? outcomes : undefined;
  };
  let smallest = difference.ruleset;
  let outcomes: Awaited<ReturnType<typeof stillDiffers>>;
  for (const candidate of simplerRulesets(smallest)) {
    if (attempt >= budget) break;
    // Each candidate drops one line or document from the smallest so far, so removals accumulate.
    const shrunk = candidate(smallest);
    if (shrunk && (outcomes = await stillDiffers(shrunk))) {
      smallest = shrunk;
      difference = { ...difference, oracle: outcomes[0], subject: outcomes[1] };
    }
  }
  return smallest === difference.ruleset ? difference : { ...difference, ruleset: { ...smallest, name: `${difference.ruleset.name}, shrunk` } };
}

type Simplification = (ruleset: Ruleset) => Ruleset | undefined;

/** One candidate per allow statement (removed) and per seed document (left out), in that order. */
function* simplerRulesets(original: Ruleset): Generator<Simplification> {
  const allowLines = original.rules.split('\n').filter((line) => /^\s*allow /.test(line));
  for (const line of allowLines) {
    yield (ruleset) => {
      const lines = ruleset.rules.split('\n');
      const at = lines.indexOf(line);
      return at < 0 ? undefined : { ...ruleset, rules: [...lines.slice(0, at), ...lines.slice(at + 1)].join('\n') };
    };
  }
  for (const path of Object.keys(original.seed)) {
    yield (ruleset) => {
      if (!(path in ruleset.seed)) return undefined;
      const { [path]: _left, ...seed } = ruleset.seed;
      return { ...ruleset, seed };
    };
  }
}
