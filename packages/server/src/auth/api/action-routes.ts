import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ActionCodeService } from '../core/action-codes.js';
import { EmulatorActionHandler } from '../core/action-emulator.js';
import { queryOf } from '../core/action-links.js';
import type { ActionMailer } from '../core/action-mail.js';
import type { Caller, EmailLinkSignInRequest, ResetPasswordRequest, SendOobCodeRequest } from '../core/requests.js';
import type { MailDelivery } from '../mail/mailer.js';
import type { Store } from '../../storage/store.js';
import type { CallerResolver } from './caller.js';
import * as schemas from './schemas.js';
import { clientAddressOf } from '../../http/address-key.js';

export interface ActionServices {
  mailer: ActionMailer;
  actions: ActionCodeService;
  callers: CallerResolver;
  mail: MailDelivery;
  store: Store;
  /** In dev mode the emulator's oobCodes list is open and its link handler served, as the Firebase emulator's are. */
  dev: boolean;
}

const v1 = '/identitytoolkit.googleapis.com/v1';
const v3 = '/www.googleapis.com/identitytoolkit/v3/relyingparty';
const maxOutbox = 500;
const { realmPaths } = schemas;

/** Email actions: send a code, check or use it, sign in by link; and the outbox for developers. */
export function registerActionRoutes(app: FastifyInstance, services: ActionServices): void {
  const { mailer, actions, callers, store } = services;

  const send = async (caller: Caller, request: FastifyRequest) => {
    const result = await mailer.send(caller, schemas.requestBody<SendOobCodeRequest>(request));
    return { kind: 'identitytoolkit#GetOobConfirmationCodeResponse', ...result };
  };
  const sendOptions = { schema: { body: schemas.sendOobCodeBody } };
  app.post(`${v1}/accounts::sendOobCode`, sendOptions, (request) => send(callers.fromApiKey(request), request));
  app.post(`${v3}/getOobConfirmationCode`, sendOptions, (request) => send(callers.fromApiKey(request), request));
  for (const [path, params] of realmPaths) {
    app.post(`${v1}${path}/accounts::sendOobCode`, { schema: { params, body: schemas.sendOobCodeBody } }, (request) =>
      send(callers.fromPath(request, (request.params as { projectId: string }).projectId), request),
    );
  }

  const resetPassword = async (request: FastifyRequest) => {
    const info = await actions.resetPassword(callers.fromApiKey(request), schemas.requestBody<ResetPasswordRequest>(request));
    return { kind: 'identitytoolkit#ResetPasswordResponse', ...info };
  };
  app.post(`${v1}/accounts::resetPassword`, { schema: { body: schemas.resetPasswordBody } }, resetPassword);
  app.post(`${v3}/resetPassword`, { schema: { body: schemas.resetPasswordBody } }, resetPassword);

  const emailLink = async (request: FastifyRequest) => {
    const { user, tokens, isNewUser } = await actions.signInWithEmailLink(callers.fromApiKey(request), schemas.requestBody<EmailLinkSignInRequest>(request));
    return { kind: 'identitytoolkit#EmailLinkSigninResponse', localId: user.localId, email: user.email, isNewUser, ...tokens };
  };
  app.post(`${v1}/accounts::signInWithEmailLink`, { schema: { body: schemas.emailLinkSignInBody } }, emailLink);
  app.post(`${v3}/emailLinkSignin`, { schema: { body: schemas.emailLinkSignInBody } }, emailLink);

  // What the Firebase emulator serves at this path, so its test helpers and the SDK's own suites work;
  // a tenant's mails at the same path under /tenants/{t}.
  for (const [path, params] of realmPaths) {
    app.get(`/emulator/v1${path}/oobCodes`, { schema: { params } }, async (request) => {
      const realm = services.dev ? callers.realmOfPath(request) : callers.ownerOfPath(request, (request.params as { projectId: string }).projectId).realm;
      const messages = await store.listOutbox(realm, maxOutbox);
      return { oobCodes: messages.map((m) => ({ email: m.to, requestType: m.requestType, oobCode: m.oobCode, oobLink: m.oobLink })) };
    });
  }

  if (services.dev) {
    // The Auth emulator's link handler (its oobLinks point here), for apps written against it.
    const emulatorActions = new EmulatorActionHandler(mailer.links, actions);
    app.get('/emulator/action', async (request, reply) => {
      const link = `${mailer.links.origin()}${request.url}`;
      const answer = await emulatorActions.answer(queryOf(request.url), link, clientAddressOf(request));
      if ('redirect' in answer) return reply.header('cache-control', 'no-store').redirect(answer.redirect, 303);
      return reply.code(answer.status).send(answer.body);
    });
  }

  for (const [path, params] of realmPaths) {
    const outboxPath = `/hearth/v1${path}/outbox`;
    const realmOf = (request: FastifyRequest) => callers.ownerOfPath(request, (request.params as { projectId: string }).projectId).realm;
    app.get(outboxPath, { schema: { params } }, async (request) => {
      return { messages: await store.listOutbox(realmOf(request), maxOutbox), delivery: services.mail.usesOutbox ? 'outbox' : 'smtp' };
    });
    app.delete(outboxPath, { schema: { params } }, async (request) => {
      await store.commit([{ kind: 'clearOutbox', projectId: realmOf(request) }]);
      return {};
    });
  }
}
