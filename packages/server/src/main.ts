#!/usr/bin/env node
import { Command, InvalidArgumentError } from 'commander';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { withDevDefaults } from './cli/dev-defaults.js';
import { devExposure } from './cli/start-checks.js';
import { origin, registerCommands } from './cli/commands.js';
import { defaultSignUpLimits } from './auth/core/signup-limit.js';
import { defaultOptions, defaultShippedRulesFile, defaultShippedStorageRulesFile, type HearthOptions } from './config.js';
import { parseTrustedProxies } from './http/trusted-proxies.js';
import { onStopSignal, startBanner } from './start-banner.js';
import { workerCount } from './workers/worker-count.js';
import { servingSummary, workerIndexVariable, workerRelayDirVariable, workerUrlVariable } from './workers/worker-messages.js';
import { announceChangeLog, serveAsWorker } from './workers/worker-process.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
  return n;
}

function httpBase(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('an http(s) URL such as https://api.twilio.com');
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash || url.username) throw new InvalidArgumentError('an http(s) URL without query, fragment or credentials');
  return value;
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('a whole number of 1 or more');
  return n;
}

interface StartFlags {
  port: number;
  host: string;
  data: string;
  databaseUrl?: string;
  dev: boolean;
  devAllowRemote: boolean;
  project: string;
  logLevel: string;
  maxFailedSignins: number;
  maxSignupsPerAddress: number;
  maxSignupsPerProject: number;
  recentLogin: number;
  smtpUrl?: string;
  publicUrl?: string;
  demoIdp?: boolean | string;
  indexes?: string;
  maxInValues: number;
  versionRetention: number;
  grpcPort?: number;
  rules?: string;
  storageRules?: string;
  functions?: string;
  storageUrl?: string;
  maxObjectSize?: number;
  storageQuota?: number;
  maxUploadsPerAddress: number;
  maxDownloadsPerAddress: number;
  captchaWork: number;
  smsUrl: string;
  smsAccount?: string;
  smsFrom?: string;
  smsOutbox: boolean;
  trustProxy?: string;
  workers?: number;
}

/** The SMS provider the flags and HEARTH_SMS_TOKEN describe, if any; a half-configured one is an error. */
function smsProvider(flags: StartFlags): HearthOptions['sms'] {
  if (flags.smsAccount === undefined && flags.smsFrom === undefined) return undefined;
  const authToken = process.env.HEARTH_SMS_TOKEN;
  if (!flags.smsAccount || !flags.smsFrom || !authToken) {
    throw new Error('an SMS provider needs --sms-account, --sms-from and the HEARTH_SMS_TOKEN environment variable');
  }
  return { baseUrl: flags.smsUrl, accountSid: flags.smsAccount, from: flags.smsFrom, authToken };
}

const program = new Command('hearth').description('Self-hostable identity server and document database for Firebase SDK apps');

program
  .command('start')
  .description('serve the identity API, the document database, the web app and the operator console (/console)')
  .option('--port <port>', 'port to listen on', port, 9000)
  .option('--host <host>', 'address to listen on', '127.0.0.1')
  .option('--data <dir>', 'data folder (SQLite file, signing keys, admin key)', './.hearth')
  .option('--database-url <url>', 'keep everything in PostgreSQL (postgres://user@host:5432/db, or HEARTH_DATABASE_URL) instead of the SQLite file')
  .option('--dev', "development mode, a drop-in for Google's Auth and Firestore emulators: any API key is accepted, `Bearer owner` is an admin, no enumeration protection nor per-address limits (unless their flags are given)", false)
  .option('--dev-allow-remote', 'allow --dev on an address beyond loopback (everyone who can reach it is an administrator); refused without it', false)
  .option('--project <id>', 'default project id (the web app and unknown keys in --dev use it)', 'demo-hearth')
  .option('--log-level <level>', 'pino log level', 'info')
  .option('--max-failed-signins <n>', 'failed password sign-ins on one account from one address before waits begin (ten times that per account, and per address, in 15 minutes)', count, 10)
  .option('--max-signups-per-address <n>', 'accounts clients may create from one address per hour, per project (administrators are not limited)', count, defaultSignUpLimits.perAddress.maxFailures)
  .option('--max-signups-per-project <n>', 'accounts clients may create in one project per hour, from all addresses', count, defaultSignUpLimits.perProject.maxFailures)
  .option('--smtp-url <url>', 'deliver mail by SMTP, e.g. smtp://user:pass@mail.example:587 (or HEARTH_SMTP_URL); otherwise mail goes to the outbox')
  .option('--public-url <url>', 'the origin action links in mails point at (default: the listening address)', origin)
  .option('--demo-idp [port]', 'run the built-in demo OpenID provider (default: the next port) and offer it as "Hearth Demo"; it trusts any email, so never in production')
  .option('--indexes <file>', 'composite indexes for the document database (firestore.indexes.json format)')
  .option('--grpc-port <port>', 'also serve gRPC for Node SDKs on this port (it is always served on --port too)', port)
  .option('--max-in-values <n>', 'values allowed in an in / array-contains-any filter (old clients expect 10)', count, 30)
  .option('--rules <file>', "Firestore security rules for the default project (firestore.rules); reloaded when the file changes")
  .option('--storage-url <url>', 'keep Cloud Storage bytes in an S3 service: s3://bucket[/prefix]?endpoint=https://s3.example&region=us-east-1 (or HEARTH_STORAGE_URL; keys in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY); default: the data folder')
  .option('--max-object-size <bytes>', 'Cloud Storage: the largest object in bytes (default 5 GiB)', count)
  .option('--storage-quota <bytes>', 'Cloud Storage: the bytes one project\'s objects may take (default: no quota)', count)
  .option('--max-uploads-per-address <n>', 'Cloud Storage: uploads one client address may have in flight at once', count, 32)
  .option('--max-downloads-per-address <n>', 'Cloud Storage: downloads one client address may have in flight at once (four times as many more wait their turn)', count, 16)
  .option('--storage-rules <file>', 'Cloud Storage security rules for the default project (storage.rules); reloaded when the file changes')
  .option('--functions <dir>', 'run this Cloud Functions for Firebase code base (its folder with package.json and firebase-functions) beside Hearth: Firestore triggers, callable and HTTP functions (docs/FUNCTIONS.md)')
  .option('--sms-account <sid>', 'send SMS codes through a Twilio-style provider with this account id (token in HEARTH_SMS_TOKEN); otherwise texts go to the SMS outbox in --dev and are refused in production')
  .option('--sms-from <number>', 'the number (or sender id) SMS codes are sent from')
  .option('--sms-url <url>', 'the SMS provider API base URL (Twilio\'s Messages API)', httpBase, 'https://api.twilio.com')
  .option('--sms-outbox', 'keep texts in the SMS outbox outside --dev too (codes readable by the admin; for trials without a provider)', false)
  .option('--recent-login <seconds>', 'how recent a sign-in must be to change email or password or delete the account', count, 300)
  .option('--captcha-work <tries>', "the reCAPTCHA stand-in's proof of work: at most this many tries of 1000 PBKDF2 iterations per check (a browser does 1000 in about 0.1 s)", count, 1000)
  .option('--trust-proxy <addresses>', 'reverse proxies whose X-Forwarded-For names the client, for every per-address limit: IP addresses or CIDR ranges, comma-separated (or HEARTH_TRUST_PROXY); unset, X-Forwarded-For is ignored')
  .option('--workers <n>', 'processes serving the port, on one data folder or one PostgreSQL database; a primary hands each client address to one of them', count)
  .option('--version-retention <seconds>', 'how long replaced and deleted documents stay readable at a past readTime (Firestore: one hour)', count, 3600)
  .action(async (flags: StartFlags, command: Command) => {
    const defaults = defaultOptions();
    let sms: HearthOptions['sms'];
    let trustProxy: string[] | undefined;
    try {
      sms = smsProvider(flags);
      const proxies = flags.trustProxy ?? process.env.HEARTH_TRUST_PROXY;
      if (proxies) trustProxy = parseTrustedProxies(proxies);
    } catch (error) {
      program.error(`error: ${(error as Error).message}`);
    }
    const given = defaultOptions({
      port: flags.port,
      host: flags.host,
      dataDir: resolve(flags.data),
      ...(flags.databaseUrl || process.env.HEARTH_DATABASE_URL ? { databaseUrl: flags.databaseUrl ?? process.env.HEARTH_DATABASE_URL } : {}),
      dev: flags.dev,
      defaultProjectId: flags.project,
      logLevel: flags.logLevel,
      recentLoginSeconds: flags.recentLogin,
      captcha: { ...defaults.captcha, maxCounter: flags.captchaWork },
      ...(flags.smtpUrl || process.env.HEARTH_SMTP_URL ? { smtpUrl: flags.smtpUrl ?? process.env.HEARTH_SMTP_URL } : {}),
      ...(flags.publicUrl ? { publicUrl: flags.publicUrl } : {}),
      ...(flags.indexes ? { indexesFile: resolve(flags.indexes) } : {}),
      maxInValues: flags.maxInValues,
      versionRetentionSeconds: flags.versionRetention,
      ...(flags.grpcPort !== undefined ? { grpcPort: flags.grpcPort } : {}),
      ...(flags.rules ? { rulesFile: resolve(flags.rules) } : {}),
      ...(flags.storageRules ? { storageRulesFile: resolve(flags.storageRules) } : {}),
      ...(flags.functions ? { functionsDir: resolve(flags.functions) } : {}),
      files: {
        maxObjectBytes: flags.maxObjectSize ?? defaults.files.maxObjectBytes,
        ...(flags.storageQuota !== undefined ? { projectQuotaBytes: flags.storageQuota } : {}),
        uploadsPerAddress: flags.maxUploadsPerAddress,
        downloadsPerAddress: flags.maxDownloadsPerAddress,
      },
      ...(flags.storageUrl || process.env.HEARTH_STORAGE_URL ? { storageUrl: flags.storageUrl ?? process.env.HEARTH_STORAGE_URL } : {}),
      shippedRulesFile: defaultShippedRulesFile,
      shippedStorageRulesFile: defaultShippedStorageRulesFile,
      ...(flags.demoIdp ? { demoIdpPort: flags.demoIdp === true ? flags.port + 1 : port(flags.demoIdp) } : {}),
      accountThrottle: { ...defaults.accountThrottle, maxFailures: flags.maxFailedSignins },
      signUpLimits: {
        perAddress: { ...defaults.signUpLimits.perAddress, maxFailures: flags.maxSignupsPerAddress },
        perProject: { ...defaults.signUpLimits.perProject, maxFailures: flags.maxSignupsPerProject },
      },
      addressThrottle: { ...defaults.addressThrottle, maxFailures: flags.maxFailedSignins * 10 },
      ...(process.env.HEARTH_ADMIN_KEY ? { adminKey: process.env.HEARTH_ADMIN_KEY } : {}),
      ...(sms ? { sms } : {}),
      smsOutbox: flags.smsOutbox,
      ...(trustProxy ? { trustProxy } : {}),
    });
    const options = flags.dev ? withDevDefaults(given, (flag) => command.getOptionValueSource(flag) === 'cli') : given;
    const exposure = devExposure({ dev: options.dev, host: options.host, devAllowRemote: flags.devAllowRemote });
    if (exposure.verdict === 'refuse') program.error(`error: ${exposure.message}`);
    // Loaded only to start: the other commands and --help need none of the server.
    const { createHearth, createLogger } = await import('./server.js');
    const logger = createLogger(options.logLevel);
    if (exposure.verdict === 'warn') {
      logger.warn({ host: options.host }, exposure.message);
      process.stderr.write(`\n  ${exposure.message}\n\n`);
    }
    const workers = workerCount({ given: flags.workers, demoIdp: options.demoIdpPort !== undefined, functions: options.functionsDir !== undefined, cores: availableParallelism() });
    if ('error' in workers) return program.error(`error: ${workers.error}`);
    const workerUrl = process.env[workerUrlVariable];
    if (workers.count > 1 && workerUrl === undefined) {
      const { startPrimary } = await import('./workers/primary.js');
      const primary = await startPrimary({ workers: workers.count, host: options.host, port: options.port, ...(options.grpcPort !== undefined ? { grpcPort: options.grpcPort } : {}), ...(options.trustProxy ? { trustedProxies: options.trustProxy } : {}), script: process.argv[1]!, args: process.argv.slice(2), execArgv: process.execArgv, logger }).catch((error: unknown) => {
        logger.error({ err: error }, 'the workers did not start');
        process.exit(1);
      });
      logger.info({ url: primary.url, workers: workers.count, project: options.defaultProjectId, dev: options.dev }, 'Hearth is serving');
      process.stderr.write(startBanner(primary.summary, options, `${workers.count} processes (--workers)`));
      onStopSignal(logger, () => primary.stop());
      return;
    }
    const hearth = await createHearth(workerUrl === undefined ? options : { ...options, worker: { index: Number(process.env[workerIndexVariable]), count: workers.count, relayDir: process.env[workerRelayDirVariable] ?? '', announce: announceChangeLog } }, logger);
    if (workerUrl !== undefined) {
      const stop = onStopSignal(logger, () => hearth.close());
      await serveAsWorker(hearth, workerUrl, stop);
      return;
    }
    const url = await hearth.listen();
    logger.info({ url, project: options.defaultProjectId, dev: options.dev }, 'Hearth is serving');
    process.stderr.write(startBanner(servingSummary(hearth, url), options, workers.note ?? 'one process'));
    onStopSignal(logger, () => hearth.close());
  });

registerCommands(program);

await program.parseAsync(process.argv);
