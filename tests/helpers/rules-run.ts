/**
 * Runs rulesets on the oracle and the subject of the security-rules differential test and collects where they
 * disagree: each ruleset is loaded into a project of its own on both, its seed written as the administrator, then
 * its cases sent one after the other to both servers as their callers; a case that writes is followed by putting
 * the documents it named back as the seed has them, so both servers always judge the same state.
 */
import { outcomeOf, writtenPaths, type Outcome, type PlainFields, type RulesCase } from './rules-requests.js';
import { loadRules, on, restoreAsAdmin, writeAsAdmin, type RulesServers } from './rules-servers.js';

export interface Ruleset {
  name: string;
  rules: string;
  /** Documents by path, written as the administrator before the cases. */
  seed: Record<string, PlainFields>;
  cases: RulesCase[];
}

export interface CaseResult {
  ruleset: Ruleset;
  index: number;
  rulesCase: RulesCase;
  oracle: Outcome;
  subject: Outcome;
}

export interface Difference extends CaseResult {
  /** Set when the allow-list explains it. */
  explained?: string;
}

/** A difference that is not a bug, with the reason; `matches` must be narrow. */
export interface Explanation {
  reason: string;
  matches(difference: Difference): boolean;
}

export interface RunSummary {
  rulesets: number;
  cases: number;
  /** Cases whose every step the oracle answered with 200. */
  allowed: number;
  /** Cases with a PERMISSION_DENIED step at the oracle. */
  denied: number;
  /** Cases the oracle answered otherwise (404, 409, 400 ...). */
  other: number;
  differences: Difference[];
  /** Rulesets that one server loaded and the other refused (their cases are not run). */
  loadDifferences: string[];
  /** Every case's answers, in order per ruleset, for RULES_DIFF_VERBOSE. */
  results: CaseResult[];
}

export function emptySummary(): RunSummary {
  return { rulesets: 0, cases: 0, allowed: 0, denied: 0, other: 0, differences: [], loadDifferences: [], results: [] };
}

/** Runs every ruleset, a few side by side, each in a project named after `projectPrefix` and its index. */
export async function runRulesets(servers: RulesServers, rulesets: Ruleset[], projectPrefix: string, explanations: Explanation[], summary = emptySummary(), concurrency = 4): Promise<RunSummary> {
  let next = 0;
  const worker = async () => {
    while (next < rulesets.length) {
      const index = next++;
      await runRuleset(servers, rulesets[index]!, `${projectPrefix}-${index}`, explanations, summary);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return summary;
}

async function runRuleset(servers: RulesServers, ruleset: Ruleset, projectId: string, explanations: Explanation[], summary: RunSummary): Promise<void> {
  const oracle = on(servers.oracle, projectId);
  const subject = on(servers.subject, projectId);
  const [oracleLoad, subjectLoad] = await Promise.all([loadRules(oracle, ruleset.rules), loadRules(subject, ruleset.rules)]);
  if (oracleLoad.status !== 200 || subjectLoad.status !== 200) {
    summary.loadDifferences.push(
      `ruleset ${ruleset.name}: loading the rules answered ${oracleLoad.status} at the ${oracle.label} and ${subjectLoad.status} at ${subject.label}\n` +
        `  ${oracle.label}: ${JSON.stringify(oracleLoad.body).slice(0, 300)}\n  ${subject.label}: ${JSON.stringify(subjectLoad.body).slice(0, 300)}\n${numbered(ruleset.rules)}`,
    );
    return;
  }
  await Promise.all([writeAsAdmin(oracle, ruleset.seed), writeAsAdmin(subject, ruleset.seed)]);
  summary.rulesets++;
  for (const [index, rulesCase] of ruleset.cases.entries()) {
    const [fromOracle, fromSubject] = await Promise.all([outcomeOf(oracle, rulesCase), outcomeOf(subject, rulesCase)]);
    summary.cases++;
    summary.results.push({ ruleset, index, rulesCase, oracle: fromOracle, subject: fromSubject });
    const statuses = stepStatuses(fromOracle.outcome);
    if (statuses.includes(403)) summary.denied++;
    else if (statuses.every((status) => status === 200)) summary.allowed++;
    else summary.other++;
    if (fromOracle.outcome !== fromSubject.outcome) {
      const difference: Difference = { ruleset, index, rulesCase, oracle: fromOracle, subject: fromSubject };
      difference.explained = explanations.find((explanation) => explanation.matches(difference))?.reason;
      summary.differences.push(difference);
    }
    const paths = writtenPaths(rulesCase.operation);
    if (paths.length > 0) await Promise.all([restoreAsAdmin(oracle, ruleset.seed, paths), restoreAsAdmin(subject, ruleset.seed, paths)]);
  }
}

/**
 * One case alone on fresh projects of both servers (the ruleset loaded, its seed written), for shrinking: the two
 * outcomes, or undefined when either server refused the rules.
 */
export async function judgeOnce(servers: RulesServers, ruleset: Ruleset, rulesCase: RulesCase, projectId: string): Promise<[Outcome, Outcome] | undefined> {
  const oracle = on(servers.oracle, projectId);
  const subject = on(servers.subject, projectId);
  const loads = await Promise.all([loadRules(oracle, ruleset.rules), loadRules(subject, ruleset.rules)]);
  if (loads.some((load) => load.status !== 200)) return undefined;
  await Promise.all([writeAsAdmin(oracle, ruleset.seed), writeAsAdmin(subject, ruleset.seed)]);
  return Promise.all([outcomeOf(oracle, rulesCase), outcomeOf(subject, rulesCase)]);
}

/** The HTTP status of each step of an outcome ("begin 200 ok; read 403 PERMISSION_DENIED" -> [200, 403]). */
export function stepStatuses(outcome: string): number[] {
  return outcome.split('; ').map((step) => Number(/\b(\d{3})\b/.exec(step)?.[1]));
}

/** A ruleset's text with line numbers, as the emulator's messages count them. */
export function numbered(text: string): string {
  return text
    .split('\n')
    .map((line, index) => `    ${String(index + 1).padStart(3)} | ${line}`)
    .join('\n');
}
