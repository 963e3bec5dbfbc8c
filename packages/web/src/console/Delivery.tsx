import { Link } from 'react-router';

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

/**
 * Where this server's mails and text messages go, in words (the overview's `mail.delivery` and
 * `sms.delivery`): the first question when nobody gets one. What needs fixing shows as a warning.
 */
export function Delivery({ mail, texts }: { mail: string; texts: string }) {
  return (
    <section aria-labelledby="delivery-heading" data-testid="delivery">
      <h2 id="delivery-heading">Where mail and texts go</h2>
      <ul className="console-list">
        <li className={mail === 'outbox' ? 'console-warning' : undefined} data-testid="mail-delivery">
          {mailWords[mail] ?? mail} <Link to="/console/outbox">Outbox</Link>
        </li>
        <li className={texts === 'none' ? 'console-warning' : undefined} data-testid="sms-delivery">
          {textWords[texts] ?? texts}
        </li>
      </ul>
    </section>
  );
}
