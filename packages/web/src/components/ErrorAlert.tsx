import { describeAuthError } from '../auth-errors';

/** The one place an error reaches the page: a plain sentence in role="alert". */
export function ErrorAlert({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  return (
    <p role="alert" className="alert">
      {describeAuthError(error)}
    </p>
  );
}

export function StatusMessage({ children }: { children: string | null }) {
  if (!children) return null;
  return (
    <p role="status" className="status">
      {children}
    </p>
  );
}
