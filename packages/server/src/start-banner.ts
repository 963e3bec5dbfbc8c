import { join } from 'node:path';
import type { Logger } from 'pino';
import type { HearthOptions } from './config.js';
import type { ServingSummary } from './workers/worker-messages.js';

/** What `hearth start` prints once it serves, and how it stops on a signal. */

const smsSummary: Record<ServingSummary["smsDelivery"], string> = {
  outbox: "codes kept in the console's Outbox (and /emulator/v1/projects/<p>/verificationCodes), none sent",
  provider: 'codes sent through the SMS provider',
  'outbox+provider': 'codes sent through the SMS provider and kept in the SMS outbox',
  none: 'no provider: phone sign-in and SMS second factors are refused (--sms-account, or --sms-outbox to try it)',
};

/** Where mails go, for the start banner: the address to look at when nobody gets one. */
function mailSummary(smtpUrl: string | undefined, dev: boolean, consoleUrl: string): string {
  const outbox = `${consoleUrl}/outbox`;
  if (!smtpUrl) return `no SMTP server: mails are not sent, only kept in the console's Outbox (${outbox}); --smtp-url sends them`;
  const host = (() => {
    try {
      return new URL(smtpUrl).host;
    } catch {
      return 'the SMTP server';
    }
  })();
  return `sent through ${host}${dev ? `, copies kept in the console's Outbox (${outbox})` : ''}`;
}

/** The start banner: where everything is, for the person who ran `hearth start`. */
export function startBanner(serving: ServingSummary, options: HearthOptions, processes: string): string {
  const { url } = serving;
  const adminKeyFrom = process.env.HEARTH_ADMIN_KEY ? 'HEARTH_ADMIN_KEY' : join(options.dataDir, 'admin-key');
  return [
    '',
    `  Hearth is serving ${url}${options.dev ? '  (dev mode)' : ''}`,
    `    web app        ${url}/`,
    `    console        ${url}/console`,
    `    project        ${options.defaultProjectId}   API key ${serving.defaultApiKey}`,
    `    admin key      in ${adminKeyFrom}`,
    `    rules          ${serving.rulesSummary}`,
    `    storage rules  ${serving.storageRulesSummary}`,
    `    functions      ${serving.functionsSummary}`,
    `    mail           ${mailSummary(options.smtpUrl, options.dev, `${url}/console`)}`,
    `    sms            ${smsSummary[serving.smsDelivery]}`,
    `    processes      ${processes}`,
    `    connect        connectAuthEmulator(auth, '${url}', { disableWarnings: true })`,
    `    firebase-admin FIREBASE_AUTH_EMULATOR_HOST=${url.replace('http://', '')} (with --dev)`,
    '',
    '',
  ].join('\n');
}

/** SIGINT and SIGTERM run `close` once, then exit; the returned function does the same for another reason. */
export function onStopSignal(logger: Logger, close: () => Promise<void>): (reason: string) => void {
  let stopping = false;
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'shutting down');
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return stop;
}
