import type { FastifyInstance, FastifyRequest } from 'fastify';
import { actionPagePath } from '../auth/core/action-links.js';
import { modeFor } from '../auth/core/oob-codes.js';
import type { ProjectConfig } from '../auth/core/project-config.js';
import { pickLanguage, renderMail } from '../auth/mail/templates.js';
import { ApiError } from '../http/api-error.js';
import type { OobRequestType } from '../storage/store.js';
import { requireOperator } from './console-gate.js';
import { consolePrefix } from './session-routes.js';

export interface MailPreviewDeps {
  config(projectId: string): Promise<ProjectConfig>;
  publicUrl(): string;
  isOwnerCredential(request: FastifyRequest): boolean;
}

/** The action mails a project's users receive (the email-change recovery is a consequence, not a request). */
const previewedTypes: OobRequestType[] = ['PASSWORD_RESET', 'VERIFY_EMAIL', 'VERIFY_AND_CHANGE_EMAIL', 'EMAIL_SIGNIN'];
const projectPattern = /^[a-z0-9][a-z0-9-]{0,62}$/i;
const languagePattern = /^[A-Za-z]{2,8}([-_][A-Za-z0-9]{1,8}){0,3}$/;
/** Stands in for a real code: a preview must never hold a usable link. */
export const previewCode = 'PREVIEW-CODE';
export const previewAddress = 'user@example.com';

/** `GET .../console/projects/{p}/mailTemplates`: each action mail as the server would render it now. */
export function registerMailPreviewRoutes(app: FastifyInstance, deps: MailPreviewDeps): void {
  app.get(`${consolePrefix}/projects/:project/mailTemplates`, async (request) => {
    requireOperator(request, deps.isOwnerCredential);
    const { project } = request.params as { project: string };
    const { languageCode } = request.query as { languageCode?: unknown };
    if (!projectPattern.test(project)) throw new ApiError(400, `Invalid project ID: ${project}`, 'INVALID_ARGUMENT');
    if (languageCode !== undefined && (typeof languageCode !== 'string' || !languagePattern.test(languageCode))) {
      throw new ApiError(400, 'languageCode must be a language tag such as en, fr or de-CH.', 'INVALID_ARGUMENT');
    }
    const config = await deps.config(project);
    const language = pickLanguage(languageCode);
    const templates = previewedTypes.map((requestType) => {
      const link = new URL(actionPagePath, deps.publicUrl());
      link.searchParams.set('mode', modeFor[requestType]);
      link.searchParams.set('oobCode', previewCode);
      link.searchParams.set('lang', language);
      const content = renderMail({ requestType, language, projectName: config.mail.projectName, email: previewAddress, link: link.toString() });
      return { requestType, ...content };
    });
    return { sender: config.mail.from, projectName: config.mail.projectName, languageCode: language, templates };
  });
}
