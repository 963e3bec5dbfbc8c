/**
 * The console's one way to the server: same-origin requests that carry the session cookie and the
 * `X-Hearth-Console` header (which the server requires before the cookie counts as the
 * administrator), never an Authorization header. The admin key never reaches this module.
 */

export class ConsoleApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** Thrown when the session has expired or was never there; the console shows its sign-in screen. */
export class SignedOutError extends ConsoleApiError {}

const sessionPath = '/hearth/v1/console/session';

type SignedOutListener = () => void;
const signedOutListeners = new Set<SignedOutListener>();

/** Called whenever a request finds the session gone (expired, revoked, signed out elsewhere). */
export function onSignedOut(listener: SignedOutListener): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The sentence inside a Google-style error (`{"error": {"message": ...}}`), or a fallback that says what happened. */
export function errorMessageOf(status: number, body: unknown): string {
  if (isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string') return body.error.message;
  if (status === 0) return 'The server could not be reached. Check that Hearth is running, then try again.';
  return `The server answered ${status}.`;
}

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** Return the response text instead of parsing JSON (downloads). */
  text?: boolean;
}

export async function consoleRequest<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { 'X-Hearth-Console': '1', accept: 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
      credentials: 'same-origin',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ConsoleApiError(0, errorMessageOf(0, undefined), undefined);
  }
  const raw = await response.text();
  let parsed: unknown = undefined;
  if (!options.text || !response.ok) {
    try {
      parsed = raw ? JSON.parse(raw) : {};
    } catch {
      parsed = raw;
    }
  }
  // The admin APIs answer a request without a live session as they would any caller without a
  // credential (401, 403, or 400 for a missing API key), so a refusal asks whether the session is gone.
  if ([400, 401, 403].includes(response.status) && !path.endsWith(sessionPath) && !(await sessionAlive())) {
    for (const listener of signedOutListeners) listener();
    throw new SignedOutError(401, 'Your console session has ended. Sign in again.', parsed);
  }
  if (!response.ok) throw new ConsoleApiError(response.status, errorMessageOf(response.status, parsed), parsed);
  return (options.text ? raw : parsed) as T;
}

async function sessionAlive(): Promise<boolean> {
  try {
    const response = await fetch(sessionPath, { credentials: 'same-origin', headers: { 'X-Hearth-Console': '1', accept: 'application/json' } });
    return response.status !== 401;
  } catch {
    // Unreachable is not signed out: the caller's own error says what happened.
    return true;
  }
}

export interface ConsoleSession {
  operator: string;
  expiresAt: number;
}

/** The current session, or null when signed out. */
export async function currentSession(): Promise<ConsoleSession | null> {
  try {
    return await consoleRequest<ConsoleSession>(sessionPath);
  } catch (error) {
    if (error instanceof ConsoleApiError && error.status === 401) return null;
    throw error;
  }
}

export function startSession(credential: { adminKey: string } | { idToken: string }): Promise<ConsoleSession> {
  return consoleRequest<ConsoleSession>(sessionPath, { method: 'POST', body: credential });
}

export async function endSession(): Promise<void> {
  await consoleRequest(sessionPath, { method: 'DELETE' });
}

/** Paths of the admin APIs for one project. */
export function identityPath(projectId: string, rest: string): string {
  return `/identitytoolkit.googleapis.com/v1/projects/${encodeURIComponent(projectId)}/${rest}`;
}
export function identityV2Path(projectId: string, rest: string): string {
  return `/identitytoolkit.googleapis.com/v2/projects/${encodeURIComponent(projectId)}/${rest}`;
}
export function documentsPath(projectId: string, databaseId: string): string {
  return `/v1/projects/${encodeURIComponent(projectId)}/databases/${encodeURIComponent(databaseId)}/documents`;
}
export function rulesApiPath(projectId: string, rest: string): string {
  return `/firebaserules.googleapis.com/v1/projects/${encodeURIComponent(projectId)}/${rest}`;
}
export function consolePath(rest: string): string {
  return `/hearth/v1/console/${rest}`;
}

/** Saves text as a file the browser downloads. */
export function download(fileName: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
