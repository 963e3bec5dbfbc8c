import { describeAuthError, isSilentAuthError, type ErrorOverrides } from '../auth-errors';

/** The one place an error reaches the page: a plain sentence in role="alert". */
export function ErrorAlert({ error, overrides }: { error: unknown; overrides?: ErrorOverrides }) {
  if (error === null || error === undefined || isSilentAuthError(error)) return null;
  return (
    <p role="alert" className="alert">
      {describeAuthError(error, overrides)}
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
