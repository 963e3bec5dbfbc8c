import { useState } from 'react';
import { consoleRequest } from '../api';
import { useConsole } from '../ConsoleApp';
import { Empty, ErrorNote, Loading, useAction, useLoad } from '../ui';

interface Mail {
  id: number;
  from?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  requestType: string;
  createdAt?: number;
}

interface Text {
  id: number;
  phoneNumber: string;
  body: string;
  createdAt: number;
}

const outboxPath = (projectId: string, which: 'outbox' | 'smsOutbox') => `/hearth/v1/projects/${encodeURIComponent(projectId)}/${which}`;

/** Every mail and text message Hearth kept (in --dev, or when no SMTP server or SMS provider is set). */
export function OutboxPage() {
  const { projectId } = useConsole();
  const mails = useLoad(() => consoleRequest<{ messages: Mail[]; delivery: string }>(outboxPath(projectId, 'outbox')), projectId);
  const texts = useLoad(() => consoleRequest<{ messages: Text[]; delivery: string }>(outboxPath(projectId, 'smsOutbox')), projectId);
  const [open, setOpen] = useState<number | null>(null);
  const clearing = useAction();
  const clear = (which: 'outbox' | 'smsOutbox') =>
    void clearing.run(async () => {
      await consoleRequest(outboxPath(projectId, which), { method: 'DELETE' });
      mails.reload();
      texts.reload();
    });
  return (
    <section>
      <h1>Outbox</h1>
      <div className="console-row">
        <button type="button" onClick={() => { mails.reload(); texts.reload(); }}>
          Refresh
        </button>
      </div>
      <ErrorNote error={clearing.error} />
      <h2>Mail</h2>
      {mails.data && <p className="console-muted">Delivery: {mails.data.delivery === 'outbox' ? 'kept here (no SMTP server)' : 'sent by SMTP; copies kept here'}.</p>}
      {mails.loading && !mails.data && <Loading what="mail" />}
      <ErrorNote error={mails.error} />
      {mails.data && mails.data.messages.length === 0 && <Empty>No mail yet. Password resets, verifications and sign-in links appear here.</Empty>}
      {mails.data && mails.data.messages.length > 0 && (
        <>
          <ul className="console-list" data-testid="outbox-mail">
            {[...mails.data.messages].reverse().map((mail) => (
              <li key={mail.id}>
                <button type="button" className="console-link" aria-expanded={open === mail.id} onClick={() => setOpen(open === mail.id ? null : mail.id)}>
                  {mail.subject}
                </button>{' '}
                <span className="console-muted">
                  to {mail.to} · {mail.requestType}
                  {mail.createdAt ? ` · ${new Date(mail.createdAt).toLocaleString()}` : ''}
                </span>
                {open === mail.id && (
                  // The mail's HTML in a sandboxed frame: no scripts, no same-origin access.
                  <iframe title={`Mail: ${mail.subject}`} sandbox="" srcDoc={mail.html} className="console-mail-preview" />
                )}
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => clear('outbox')} disabled={clearing.busy}>
            Clear mail
          </button>
        </>
      )}
      <h2>Text messages</h2>
      {texts.loading && !texts.data && <Loading what="text messages" />}
      <ErrorNote error={texts.error} />
      {texts.data && texts.data.messages.length === 0 && <Empty>No text messages yet. Phone sign-in codes appear here.</Empty>}
      {texts.data && texts.data.messages.length > 0 && (
        <>
          <ul className="console-list" data-testid="outbox-sms">
            {[...texts.data.messages].reverse().map((text) => (
              <li key={text.id}>
                <strong>{text.phoneNumber}</strong> {text.body} <span className="console-muted">{new Date(text.createdAt).toLocaleString()}</span>
              </li>
            ))}
          </ul>
          <button type="button" onClick={() => clear('smsOutbox')} disabled={clearing.busy}>
            Clear text messages
          </button>
        </>
      )}
    </section>
  );
}
