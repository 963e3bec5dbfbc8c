import type { SimulateAnswer } from './rules-api';

/** A playground's answer: allowed or denied, the statement that decided, and why a denial happened. */
export function Verdict({ answer }: { answer: SimulateAnswer }) {
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
      {answer.reason && !answer.allowed && <p>Why: {answer.reason}</p>}
      {answer.error && <p>Evaluation error: {answer.error}</p>}
      {(answer.issues ?? []).map((issue, index) => (
        <p key={index}>
          Line {issue.line}: {issue.message}
        </p>
      ))}
    </div>
  );
}
