import { Link } from 'react-router';
import { consoleRequest } from './api';
import { useConsole } from './ConsoleApp';
import { ErrorNote, useLoad } from './ui';

const outboxPath = (projectId: string, which: 'outbox' | 'smsOutbox') => `/hearth/v1/projects/${encodeURIComponent(projectId)}/${which}`;

const mailWords: Record<string, string> = {
  outbox: 'No SMTP server: mails (verifications, password resets, sign-in links) are not sent. They are kept in the Outbox, and nobody receives them unless you pass them on. Start Hearth with --smtp-url to send them.',
  smtp: 'Mails are sent by the SMTP server.',
};
const textWords: Record<string, string> = {
  none: 'No SMS provider: phone sign-in and codes by text message are refused (--sms-account sets one up).',
  outbox: 'Text messages are not sent: their codes are kept in the Outbox.',
  provider: 'Text messages are sent by the SMS provider.',
  'outbox+provider': 'Text messages are sent by the SMS provider, and copies kept in the Outbox.',
};

/** Where this server's mails and text messages go, in words: the first question when nobody gets one. */
export function Delivery() {
  const { projectId } = useConsole();
  const mail = useLoad(() => consoleRequest<{ delivery: string }>(outboxPath(projectId, 'outbox')), projectId);
  const texts = useLoad(() => consoleRequest<{ delivery: string }>(outboxPath(projectId, 'smsOutbox')), projectId);
  return (
    <section aria-labelledby="delivery-heading" data-testid="delivery">
      <h2 id="delivery-heading">Where mail and texts go</h2>
      <ErrorNote error={mail.error ?? texts.error} />
      <ul className="console-list">
        {mail.data && (
          <li className={mail.data.delivery === 'outbox' ? 'console-warning' : undefined} data-testid="mail-delivery">
            {mailWords[mail.data.delivery] ?? mail.data.delivery} <Link to="/console/outbox">Outbox</Link>
          </li>
        )}
        {texts.data && (
          <li className={texts.data.delivery === 'none' ? 'console-warning' : undefined} data-testid="sms-delivery">
            {textWords[texts.data.delivery] ?? texts.data.delivery}
          </li>
        )}
      </ul>
    </section>
  );
}
