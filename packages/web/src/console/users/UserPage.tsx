import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, formatTime, useAction, useLoad } from '../ui';
import { deleteAccount, lookupAccount, providerName, sendMail, updateAccount, type Account } from './accounts';

export function UserPage() {
  const { projectId } = useConsole();
  const uid = useParams().uid ?? '';
  const user = useLoad(() => lookupAccount(projectId, uid), `${projectId}|${uid}`);
  return (
    <section>
      <p>
        <Link to="/console/users">← All users</Link>
      </p>
      {user.loading && !user.data && <Loading what="the user" />}
      <ErrorNote error={user.error} />
      {user.data === null && <Empty>No user has the ID {uid}. It may have been deleted.</Empty>}
      {user.data && <UserDetails user={user.data} reload={user.reload} />}
    </section>
  );
}

function UserDetails({ user, reload }: { user: Account; reload: () => void }) {
  const { projectId } = useConsole();
  const navigate = useNavigate();
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const [confirmingDelete, setConfirmingDelete] = useState(false);

  async function act(what: () => Promise<unknown>, done: string) {
    setNotice(null);
    if (await action.run(async () => void (await what()))) {
      setNotice(done);
      reload();
    }
  }

  return (
    <>
      <h1>
        {user.email ?? user.phoneNumber ?? user.displayName ?? 'Anonymous user'}{' '}
        {user.disabled && <span className="console-badge" data-testid="user-disabled">disabled</span>}
      </h1>
      <dl className="console-facts">
        <dt>User ID</dt>
        <dd>
          <code>{user.localId}</code>
        </dd>
        <dt>Email</dt>
        <dd>{user.email ? `${user.email} (${user.emailVerified ? 'verified' : 'not verified'})` : '—'}</dd>
        <dt>Phone</dt>
        <dd>{user.phoneNumber ?? '—'}</dd>
        <dt>Display name</dt>
        <dd>{user.displayName ?? '—'}</dd>
        <dt>Created</dt>
        <dd>{formatTime(user.createdAt)}</dd>
        <dt>Last sign-in</dt>
        <dd>{formatTime(user.lastLoginAt)}</dd>
        <dt>Last token refresh</dt>
        <dd>{user.lastRefreshAt ? new Date(user.lastRefreshAt).toLocaleString() : '—'}</dd>
        <dt>Sessions valid since</dt>
        <dd>{user.validSince ? new Date(Number(user.validSince) * 1000).toLocaleString() : '—'}</dd>
      </dl>

      <h2>Sign-in providers</h2>
      {(user.providerUserInfo ?? []).length === 0 ? (
        <Empty>No providers: an anonymous account.</Empty>
      ) : (
        <ul>
          {(user.providerUserInfo ?? []).map((info) => (
            <li key={`${info.providerId}:${info.rawId ?? ''}`}>
              <strong>{providerName(info.providerId)}</strong> {info.email ?? info.phoneNumber ?? info.rawId ?? ''}
            </li>
          ))}
        </ul>
      )}

      <h2>Second factors</h2>
      {(user.mfaInfo ?? []).length === 0 ? (
        <Empty>None enrolled.</Empty>
      ) : (
        <ul>
          {(user.mfaInfo ?? []).map((factor) => {
            const others = (user.mfaInfo ?? []).filter((other) => other.mfaEnrollmentId !== factor.mfaEnrollmentId);
            // The admin API sets the whole list and can only name text-message factors: removing one
            // while an authenticator app stays would drop the app too.
            const keepsApp = others.some((other) => !other.phoneInfo);
            return (
            <li key={factor.mfaEnrollmentId}>
              {factor.phoneInfo ? `Text message to ${factor.phoneInfo}` : factor.totpInfo ? 'Authenticator app' : 'Second factor'}
              {factor.displayName ? ` “${factor.displayName}”` : ''}, enrolled {factor.enrolledAt ? new Date(factor.enrolledAt).toLocaleString() : '—'}{' '}
              <button
                type="button"
                aria-label={`Remove second factor ${factor.displayName ?? factor.phoneInfo ?? factor.mfaEnrollmentId}`}
                disabled={action.busy || keepsApp}
                title={keepsApp ? 'Remove the authenticator app first: the admin API cannot keep it while changing the list.' : undefined}
                onClick={() =>
                  void act(
                    () =>
                      updateAccount(projectId, {
                        localId: user.localId,
                        mfa: { enrollments: others.map((other) => ({ mfaEnrollmentId: other.mfaEnrollmentId, phoneInfo: other.phoneInfo, ...(other.displayName ? { displayName: other.displayName } : {}), ...(other.enrolledAt ? { enrolledAt: other.enrolledAt } : {}) })) },
                      }),
                    'Second factor removed.',
                  )
                }
              >
                Remove
              </button>
            </li>
            );
          })}
        </ul>
      )}

      <h2>Passkeys</h2>
      {(user.passkeyInfo ?? []).length === 0 ? (
        <Empty>None.</Empty>
      ) : (
        <ul>
          {(user.passkeyInfo ?? []).map((passkey) => (
            <li key={passkey.credentialId} data-testid="console-passkey">
              {passkey.name ? `“${passkey.name}”` : 'Passkey'}, added {passkey.createdAt ? new Date(passkey.createdAt).toLocaleString() : '—'}, last used{' '}
              {passkey.lastUsedAt ? new Date(passkey.lastUsedAt).toLocaleString() : 'never'}{' '}
              <button
                type="button"
                aria-label={`Remove passkey ${passkey.name ?? passkey.credentialId}`}
                disabled={action.busy}
                onClick={() => void act(() => updateAccount(projectId, { localId: user.localId, deletePasskey: [passkey.credentialId] }), 'Passkey removed: it no longer signs in.')}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}

      {(user.mfaInfo ?? []).length > 0 && (
        <p data-testid="recovery-codes-remaining">
          Recovery codes:{' '}
          {user.recoveryCodesRemaining === undefined ? 'none made' : `${user.recoveryCodesRemaining} of 10 left`}{' '}
          <span className="console-muted">(only the user sees the codes, once, when making them)</span>
        </p>
      )}

      <ClaimsEditor user={user} onSaved={reload} />

      <h2>Actions</h2>
      <div className="console-row">
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void act(() => updateAccount(projectId, { localId: user.localId, disableUser: !user.disabled }), user.disabled ? 'Account enabled.' : 'Account disabled: its sign-ins and token refreshes now fail.')}
        >
          {user.disabled ? 'Enable account' : 'Disable account'}
        </button>
        <button
          type="button"
          disabled={action.busy}
          onClick={() => void act(() => updateAccount(projectId, { localId: user.localId, validSince: String(Math.floor(Date.now() / 1000)) }), 'Sessions revoked: refresh tokens issued before now no longer work.')}
        >
          Revoke sessions
        </button>
        {user.email && (
          <>
            <button type="button" disabled={action.busy} onClick={() => void act(() => sendMail(projectId, 'PASSWORD_RESET', user.email!), `Password reset mail sent to ${user.email}.`)}>
              Send password reset
            </button>
            {!user.emailVerified && (
              <button type="button" disabled={action.busy} onClick={() => void act(() => sendMail(projectId, 'VERIFY_EMAIL', user.email!), `Verification mail sent to ${user.email}.`)}>
                Send verification mail
              </button>
            )}
          </>
        )}
        <button type="button" className="console-danger" disabled={action.busy} onClick={() => setConfirmingDelete(true)}>
          Delete user
        </button>
      </div>
      {confirmingDelete && (
        <div role="alertdialog" aria-labelledby="delete-title" className="console-panel console-confirm">
          <p id="delete-title">Delete {user.email ?? user.localId} for good? This cannot be undone.</p>
          <button
            type="button"
            className="console-danger"
            autoFocus
            onClick={() => void action.run(async () => { await deleteAccount(projectId, user.localId); await navigate('/console/users'); })}
          >
            Yes, delete
          </button>
          <button type="button" onClick={() => setConfirmingDelete(false)}>
            Cancel
          </button>
        </div>
      )}
      <ErrorNote error={action.error} />
      {notice && <p role="status">{notice}</p>}
    </>
  );
}

const reservedClaims = ['acr', 'amr', 'at_hash', 'aud', 'auth_time', 'azp', 'cnf', 'c_hash', 'exp', 'firebase', 'iat', 'iss', 'jti', 'nbf', 'nonce', 'sub'];

/** Why this text cannot be saved as custom claims, or null when it can. */
export function claimsProblem(text: string): string | null {
  if (!text.trim()) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `Not valid JSON: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'Claims must be a JSON object, like {"admin": true}.';
  const reserved = Object.keys(value).filter((key) => reservedClaims.includes(key));
  if (reserved.length) return `These claim names are reserved: ${reserved.join(', ')}.`;
  if (new TextEncoder().encode(JSON.stringify(value)).length > 1000) return 'Claims must be at most 1000 bytes.';
  return null;
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text) as unknown, null, 2);
  } catch {
    return text;
  }
}

function ClaimsEditor({ user, onSaved }: { user: Account; onSaved: () => void }) {
  const { projectId } = useConsole();
  const initial = user.customAttributes ? prettyJson(user.customAttributes) : '';
  const [text, setText] = useState(initial);
  useEffect(() => setText(initial), [initial]);
  const problem = claimsProblem(text);
  const action = useAction();
  const [saved, setSaved] = useState(false);
  return (
    <>
      <h2>Custom claims</h2>
      <label className="console-block">
        Claims (JSON)
        <textarea rows={5} spellCheck={false} value={text} onChange={(event) => { setText(event.target.value); setSaved(false); }} aria-invalid={problem !== null} aria-describedby="claims-problem" />
      </label>
      {problem && (
        <p id="claims-problem" className="console-alert">
          {problem}
        </p>
      )}
      <button
        type="button"
        disabled={problem !== null || action.busy || text === initial}
        onClick={() =>
          void action.run(async () => {
            await updateAccount(projectId, { localId: user.localId, customAttributes: text.trim() ? JSON.stringify(JSON.parse(text)) : '{}' });
            setSaved(true);
            onSaved();
          })
        }
      >
        Save claims
      </button>
      {saved && <span role="status"> Saved. They reach the user’s ID token at its next refresh.</span>}
      <ErrorNote error={action.error} />
    </>
  );
}
