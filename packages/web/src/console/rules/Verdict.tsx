import type { SimulateAnswer } from './rules-api';

/** One failed allow of a denial: its method, its line in the rules, and what its condition gave. */
interface FailedAllow {
  method: string;
  line: number;
  outcome: string;
}

/** The failures in the server's one-line reason ("false for 'update' @ L28, ..."), as Google words them. */
export function failedAllows(reason: string): FailedAllow[] {
  const found: FailedAllow[] = [];
  for (const match of reason.matchAll(/(?:^|, )(.*?) for '(\w+)' @ L(\d+)/g)) found.push({ outcome: match[1]!, method: match[2]!, line: Number(match[3]) });
  return found;
}

/** A denial told in sentences, each with the statement it is about (quoted from the rules being tried). */
function Explanation({ reason, source }: { reason: string; source: string | undefined }) {
  const failures = failedAllows(reason);
  if (failures.length === 0) return <p>Why: {reason}</p>;
  const lines = source?.split('\n') ?? [];
  return (
    <ul data-testid="denial-explanation">
      {failures.map((failure, index) => (
        <li key={index}>
          {failure.outcome === 'false'
            ? `The condition of the allow on line ${failure.line} was false for this ${failure.method}.`
            : `The allow on line ${failure.line} could not decide this ${failure.method}: ${failure.outcome}.`}
          {lines[failure.line - 1]?.trim() && (
            <>
              {' '}
              <code>{lines[failure.line - 1]!.trim()}</code>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/** A playground's answer: allowed or denied, the statement that decided, and why a denial happened. */
export function Verdict({ answer, source }: { answer: SimulateAnswer; source?: string }) {
  return (
    <div className={answer.allowed ? 'console-verdict console-allow' : 'console-verdict console-deny'} data-testid="playground-verdict" role="status">
      <strong>{answer.allowed ? 'Allowed' : 'Denied'}</strong>
      {answer.decidedBy ? (
        <p>
          Decided at line {answer.decidedBy.line} by <code>match {answer.decidedBy.match}</code>
          {answer.decidedBy.condition ? (
            <>
              {' '}
              with <code>{answer.decidedBy.condition}</code>
            </>
          ) : null}
          .
        </p>
      ) : (
        !answer.allowed && <p>No rule allows this request.</p>
      )}
      {answer.reason && !answer.allowed && <Explanation reason={answer.reason} source={source} />}
      {answer.error && <p>Evaluation error: {answer.error}</p>}
      {(answer.issues ?? []).map((issue, index) => (
        <p key={index}>
          Line {issue.line}: {issue.message}
        </p>
      ))}
    </div>
  );
}
