import { useState } from 'react';
import { consoleRequest } from '../api';
import { useConsole } from '../ConsoleApp';
import { ErrorNote, Loading, useLoad } from '../ui';

interface Template {
  requestType: string;
  subject: string;
  html: string;
  text: string;
}

const titles: Record<string, string> = {
  PASSWORD_RESET: 'Password reset',
  VERIFY_EMAIL: 'Email verification',
  VERIFY_AND_CHANGE_EMAIL: 'Email change',
  EMAIL_SIGNIN: 'Email sign-in link',
};
const languages = [
  ['en', 'English'],
  ['fr', 'Français'],
  ['de', 'Deutsch'],
] as const;

/** Each action mail as the server renders it now, with a placeholder link that signs nobody in. */
export function MailTemplates() {
  const { projectId } = useConsole();
  const [language, setLanguage] = useState('en');
  const path = `/hearth/v1/console/projects/${encodeURIComponent(projectId)}/mailTemplates?languageCode=${language}`;
  const preview = useLoad(() => consoleRequest<{ sender: string; templates: Template[] }>(path), path);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <div data-testid="mail-templates">
      <h2>Mail templates</h2>
      <label>
        Language{' '}
        <select aria-label="Mail language" value={language} onChange={(event) => setLanguage(event.target.value)}>
          {languages.map(([code, name]) => (
            <option key={code} value={code}>
              {name}
            </option>
          ))}
        </select>
      </label>
      {preview.loading && !preview.data && <Loading what="the mail templates" />}
      <ErrorNote error={preview.error} />
      {preview.data && (
        <>
          <p className="console-muted">
            Sent from <code data-testid="mail-sender">{preview.data.sender}</code>, in the language the app asks for. Links here are placeholders.
          </p>
          <ul className="console-list">
            {preview.data.templates.map((template) => (
              <li key={template.requestType}>
                <button type="button" className="console-link" aria-expanded={open === template.requestType} onClick={() => setOpen(open === template.requestType ? null : template.requestType)}>
                  {titles[template.requestType] ?? template.requestType}
                </button>{' '}
                <span className="console-muted">{template.subject}</span>
                {open === template.requestType && (
                  // The mail's HTML in a sandboxed frame: no scripts, no same-origin access.
                  <iframe title={`Mail template: ${template.subject}`} sandbox="" srcDoc={template.html} className="console-mail-preview" />
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
