import { useState } from 'react';
import { consoleRequest, identityV2Path } from '../api';
import { useConsole } from '../ConsoleApp';
import { ErrorNote, Loading, useAction, useLoad } from '../ui';
import { IdentityProviders } from './IdentityProviders';
import { MailTemplates } from './MailTemplates';

interface ProjectConfig {
  signIn: { email: { enabled: boolean; passwordRequired: boolean }; anonymous: { enabled: boolean }; phoneNumber: { enabled: boolean } };
  authorizedDomains: string[];
  apiKeys: string[];
  mail?: { projectName: string; from: string };
}

export function SettingsPage() {
  const { projectId } = useConsole();
  const config = useLoad(() => consoleRequest<ProjectConfig>(identityV2Path(projectId, 'config')), projectId);
  const action = useAction();
  const [notice, setNotice] = useState<string | null>(null);
  const email = config.data?.signIn.email;

  // The PATCH answers with the whole config, which becomes the page's at once: the notice and the
  // switches change in one render, never a notice beside a switch still showing the old value.
  async function patch(mask: string, body: Record<string, unknown>, done: string) {
    setNotice(null);
    let saved: ProjectConfig | undefined;
    if (await action.run(async () => void (saved = await consoleRequest<ProjectConfig>(`${identityV2Path(projectId, 'config')}?updateMask=${encodeURIComponent(mask)}`, { method: 'PATCH', body })))) {
      if (saved) config.replace(saved);
      setNotice(done);
    }
  }

  return (
    <section>
      <h1>Sign-in settings</h1>
      {config.loading && !config.data && <Loading what="the settings" />}
      <ErrorNote error={config.error} />
      {config.data && email && (
        <>
          <h2>Sign-in methods</h2>
          <ul className="console-list">
            {/* Identity Platform's model: the email provider (enabled) allows password sign-in, and
                passwordRequired: false adds email links to it. Each box changes its own switch only. */}
            <Toggle label="Email and password" checked={email.enabled} disabled={action.busy} onChange={(on) => void patch('signIn.email.enabled', { signIn: { email: { enabled: on } } }, `Email and password ${on ? 'enabled' : 'disabled'}.`)} />
            <Toggle
              label="Email link (passwordless)"
              checked={email.enabled && !email.passwordRequired}
              disabled={action.busy || !email.enabled}
              hint={email.enabled ? undefined : 'Email links are part of the email provider: turn on “Email and password” first.'}
              onChange={(on) => void patch('signIn.email.passwordRequired', { signIn: { email: { passwordRequired: !on } } }, `Email link ${on ? 'enabled' : 'disabled'}.`)}
            />
            <Toggle label="Anonymous" checked={config.data.signIn.anonymous.enabled} disabled={action.busy} onChange={(on) => void patch('signIn.anonymous.enabled', { signIn: { anonymous: { enabled: on } } }, `Anonymous sign-in ${on ? 'enabled' : 'disabled'}.`)} />
            <Toggle label="Phone" checked={config.data.signIn.phoneNumber.enabled} disabled={action.busy} onChange={(on) => void patch('signIn.phoneNumber.enabled', { signIn: { phoneNumber: { enabled: on } } }, `Phone sign-in ${on ? 'enabled' : 'disabled'}.`)} />
          </ul>
          <ListEditor
            title="Authorized domains"
            hint="Pages on these domains may use redirect and popup sign-in and appear in action links."
            items={config.data.authorizedDomains}
            placeholder="app.example.com"
            busy={action.busy}
            onSave={(items) => void patch('authorizedDomains', { authorizedDomains: items }, 'Authorized domains saved.')}
          />
          <ListEditor
            title="API keys"
            hint="Browser keys that name this project. Removing one breaks the apps that use it."
            items={config.data.apiKeys}
            placeholder="at least 8 characters"
            busy={action.busy}
            onSave={(items) => void patch('apiKeys', { apiKeys: items }, 'API keys saved.')}
          />
          {config.data.mail && (
            <>
              <h2>Mail sender</h2>
              <p>
                Mails come from <code>{config.data.mail.from}</code> as “{config.data.mail.projectName}”. See what was sent on the <a href="/console/outbox">Outbox</a> page.
              </p>
            </>
          )}
        </>
      )}
      <ErrorNote error={action.error} />
      {notice && <p role="status">{notice}</p>}
      <MailTemplates />
      <IdentityProviders />
    </section>
  );
}

function Toggle({ label, checked, disabled, hint, onChange }: { label: string; checked: boolean; disabled: boolean; hint?: string | undefined; onChange: (on: boolean) => void }) {
  return (
    <li>
      <label>
        <input type="checkbox" role="switch" checked={checked} disabled={disabled} onChange={(event) => onChange(event.target.checked)} /> {label}
      </label>
      {hint && <small className="console-muted"> {hint}</small>}
    </li>
  );
}

function ListEditor({ title, hint, items, placeholder, busy, onSave }: { title: string; hint: string; items: string[]; placeholder: string; busy: boolean; onSave: (items: string[]) => void }) {
  const [draft, setDraft] = useState('');
  return (
    <>
      <h2>{title}</h2>
      <p className="console-muted">{hint}</p>
      <ul className="console-list">
        {items.map((item) => (
          <li key={item}>
            <code>{item}</code>{' '}
            <button type="button" aria-label={`Remove ${item}`} disabled={busy} onClick={() => onSave(items.filter((other) => other !== item))}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      <form className="console-row" onSubmit={(event) => { event.preventDefault(); const value = draft.trim(); if (value && !items.includes(value)) { onSave([...items, value]); setDraft(''); } }}>
        <input aria-label={`New ${title.toLowerCase().replace(/s$/, '')}`} placeholder={placeholder} value={draft} onChange={(event) => setDraft(event.target.value)} />
        <button type="submit" disabled={busy || !draft.trim()}>
          Add
        </button>
      </form>
    </>
  );
}
