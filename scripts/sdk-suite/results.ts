/** What one run of a suite gave, test by test, and how it is printed. */

export type Outcome = 'passed' | 'failed' | 'pending';

export interface TestOutcome {
  title: string;
  outcome: Outcome;
  /** The first line of the failure, when it failed. */
  error?: string;
}

export interface SuiteRun {
  /** Every test mocha registered. */
  total: number;
  tests: TestOutcome[];
  /** Failures of hooks (a beforeEach that throws skips its tests: they count as not run). */
  hookFailures: TestOutcome[];
  /** Why the run ended early, when it did (a crash, the overall timeout). */
  aborted?: string;
}

export interface Counts {
  total: number;
  passed: number;
  failed: number;
  pending: number;
  notRun: number;
}

export function countsOf(run: SuiteRun): Counts {
  const count = (outcome: Outcome) => run.tests.filter((test) => test.outcome === outcome).length;
  const passed = count('passed');
  const failed = count('failed');
  const pending = count('pending');
  return { total: run.total, passed, failed, pending, notRun: Math.max(0, run.total - passed - failed - pending) };
}

export function formatCounts(counts: Counts): string {
  return `${counts.passed}/${counts.total} passed, ${counts.failed} failed, ${counts.pending} skipped, ${counts.notRun} not run`;
}

/**
 * The mocha reporter both runners install (as source: it runs in the child process or the page),
 * collecting each test's last outcome (retries overwrite earlier attempts) and failed hooks.
 */
export const collectorSource = `
function collectResults(runner, rootSuite, done) {
  const tests = new Map();
  const hookFailures = [];
  const firstLine = (err) => String((err && (err.message || err)) || 'failed').split('\\n')[0].slice(0, 300);
  runner.on('pass', (test) => tests.set(test.fullTitle(), { title: test.fullTitle(), outcome: 'passed' }));
  runner.on('pending', (test) => tests.set(test.fullTitle(), { title: test.fullTitle(), outcome: 'pending' }));
  runner.on('fail', (test, err) => {
    if (test.type === 'hook') hookFailures.push({ title: test.fullTitle(), outcome: 'failed', error: firstLine(err) });
    else tests.set(test.fullTitle(), { title: test.fullTitle(), outcome: 'failed', error: firstLine(err) });
  });
  runner.on('end', () => done({ total: rootSuite.total(), tests: [...tests.values()], hookFailures }));
}
`;
