import { OAuthProvider, SAMLAuthProvider, signInWithPopup, signOut } from 'firebase/auth';
import { useState } from 'react';
import { describeAuthError } from '../../auth-errors';
import { consoleRequest, identityV2Path } from '../api';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useAction, useLoad } from '../ui';

const collections = [
  { name: 'oauthIdpConfigs', idParameter: 'oauthIdpConfigId', label: 'OIDC', example: 'oidc.acme', template: { displayName: 'Acme', issuer: 'https://login.acme.test', clientId: '', clientSecret: '', enabled: false } },
  {
    name: 'inboundSamlConfigs',
    idParameter: 'inboundSamlConfigId',
    label: 'SAML',
    example: 'saml.acme',
    template: { displayName: 'Acme', enabled: false, idpConfig: { idpEntityId: '', ssoUrl: '', idpCertificates: [{ x509Certificate: '' }] }, spConfig: { spEntityId: '', callbackUri: '' } },
  },
  { name: 'defaultSupportedIdpConfigs', idParameter: 'idpId', label: 'OAuth preset', example: 'github.com', template: { clientId: '', clientSecret: '', enabled: false } },
] as const;

type Collection = (typeof collections)[number];
type Config = Record<string, unknown> & { name: string; enabled?: boolean };

async function listAll(projectId: string): Promise<{ collection: Collection; config: Config }[]> {
  const lists = await Promise.all(
    collections.map(async (collection) => {
      const answer = await consoleRequest<Record<string, Config[] | undefined>>(identityV2Path(projectId, collection.name));
      return (answer[collection.name] ?? []).map((config) => ({ collection, config }));
    }),
  );
  return lists.flat();
}

const providerIdOf = (config: Config) => config.name.split('/').pop() ?? '';

export function IdentityProviders() {
  const { projectId } = useConsole();
  const providers = useLoad(() => listAll(projectId), projectId);
  const [editing, setEditing] = useState<{ collection: Collection; providerId: string; text: string; isNew: boolean } | null>(null);
  const action = useAction();

  return (
    <>
      <h2>Identity providers</h2>
      {providers.loading && <Loading what="identity providers" />}
      <ErrorNote error={providers.error} />
      {providers.data && providers.data.length === 0 && <Empty>No identity providers yet. Add OIDC, SAML or a preset (Google, GitHub, …) below.</Empty>}
      {providers.data && providers.data.length > 0 && (
        <ul className="console-list" data-testid="identity-providers">
          {providers.data.map(({ collection, config }) => {
            const providerId = providerIdOf(config);
            return (
              <li key={config.name}>
                <strong>{typeof config.displayName === 'string' ? config.displayName : providerId}</strong> <code>{providerId}</code> <span className="console-muted">{collection.label}</span> {config.enabled ? <span className="console-badge console-ok">enabled</span> : <span className="console-badge">disabled</span>}{' '}
                <button type="button" onClick={() => setEditing({ collection, providerId, text: JSON.stringify(withoutName(config), null, 2), isNew: false })}>
                  Edit
                </button>{' '}
                <TestSignIn providerId={providerId} saml={collection.name === 'inboundSamlConfigs'} />
              </li>
            );
          })}
        </ul>
      )}
      <div className="console-row">
        {collections.map((collection) => (
          <button key={collection.name} type="button" onClick={() => setEditing({ collection, providerId: collection.example, text: JSON.stringify(collection.template, null, 2), isNew: true })}>
            Add {collection.label}
          </button>
        ))}
      </div>
      {editing && (
        <form
          className="console-panel"
          aria-label="Identity provider"
          onSubmit={(event) => {
            event.preventDefault();
            void action.run(async () => {
              let body: unknown;
              try {
                body = JSON.parse(editing.text);
              } catch {
                throw new Error('The settings are not valid JSON.');
              }
              const base = identityV2Path(projectId, editing.collection.name);
              if (editing.isNew) await consoleRequest(`${base}?${editing.collection.idParameter}=${encodeURIComponent(editing.providerId)}`, { body });
              else await consoleRequest(`${base}/${encodeURIComponent(editing.providerId)}`, { method: 'PATCH', body });
              setEditing(null);
              providers.reload();
            });
          }}
        >
          <h3>
            {editing.isNew ? 'New' : 'Edit'} {editing.collection.label} provider
          </h3>
          <label>
            Provider ID <input value={editing.providerId} readOnly={!editing.isNew} onChange={(event) => setEditing({ ...editing, providerId: event.target.value })} />
          </label>
          <label className="console-block">
            Settings (JSON)
            <textarea rows={10} spellCheck={false} value={editing.text} onChange={(event) => setEditing({ ...editing, text: event.target.value })} />
          </label>
          <div className="console-row">
            <button type="submit" disabled={action.busy}>
              Save
            </button>
            {!editing.isNew && (
              <button
                type="button"
                className="console-danger"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    await consoleRequest(`${identityV2Path(projectId, editing.collection.name)}/${encodeURIComponent(editing.providerId)}`, { method: 'DELETE' });
                    setEditing(null);
                    providers.reload();
                  })
                }
              >
                Delete provider
              </button>
            )}
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
          <ErrorNote error={action.error} />
        </form>
      )}
    </>
  );
}

function withoutName(config: Config): Record<string, unknown> {
  const { name: _name, ...rest } = config;
  return rest;
}

/** Signs in with the provider in a popup, through the firebase SDK, and shows who came back (then signs out again). */
function TestSignIn({ providerId, saml }: { providerId: string; saml: boolean }) {
  const { firebase } = useConsole();
  const [outcome, setOutcome] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function test() {
    setBusy(true);
    setOutcome(null);
    try {
      const result = await signInWithPopup(firebase.auth, saml ? new SAMLAuthProvider(providerId) : new OAuthProvider(providerId));
      setOutcome(`Test sign-in worked: ${result.user.email ?? result.user.uid}.`);
      await signOut(firebase.auth);
    } catch (error) {
      setOutcome(`Test sign-in failed: ${describeAuthError(error)} Check the provider's settings and that it is enabled.`);
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <button type="button" disabled={busy} onClick={() => void test()}>
        {busy ? 'Testing…' : 'Test sign-in'}
      </button>
      {outcome && <span role="status" data-testid="test-sign-in-outcome"> {outcome}</span>}
    </>
  );
}
