import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { StorageLimitExceeded, StorageUnavailable } from '../storage/document-store.js';
import { ApiError, requestErrors } from './api-error.js';

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** The one place errors become wire answers: typed ApiErrors as they are, everything else mapped. */
export function toApiError(error: unknown, bodyLimit?: number): ApiError {
  if (error instanceof ApiError) return error;
  // Nothing was stored: UNAVAILABLE tells the SDKs to retry.
  if (error instanceof StorageUnavailable) return new ApiError(503, 'The service is currently unavailable.', 'UNAVAILABLE');
  if (error instanceof StorageLimitExceeded) return requestErrors.invalidArgument(error.message);
  const fastifyError = error as Partial<FastifyError> & { validation?: ValidationIssue[] };
  if (fastifyError.validation?.length) return fromValidation(fastifyError.validation[0]!);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // Fastify's message names no size: the limit is the route's (or the app's) own.
      return requestErrors.payloadTooLarge(bodyLimit ?? Number(/\d+/.exec(fastifyError.message ?? '')?.[0] ?? 0));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return requestErrors.unsupportedMediaType(fastifyError.message?.split(': ').pop() ?? 'unknown');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return requestErrors.invalidJson('The body is empty.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return requestErrors.invalidArgument('Request body size did not match Content-Length.');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_ASYNC_CONSTRAINT':
      return requestErrors.invalidArgument('The request URL is malformed.');
  }
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) {
    return requestErrors.invalidJson(fastifyError.message ?? 'Malformed body.');
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError(fastifyError.statusCode, fastifyError.message ?? 'Bad request.', 'INVALID_ARGUMENT');
  }
  return requestErrors.internal();
}

function fromValidation(issue: ValidationIssue): ApiError {
  const field = issue.instancePath.replace(/^\//, '').replaceAll('/', '.');
  if (issue.keyword === 'additionalProperties') {
    const name = String(issue.params.additionalProperty);
    return requestErrors.unknownField(field ? `${field}.${name}` : name);
  }
  if (issue.keyword === 'type') {
    const expected = String(issue.params.type).toUpperCase();
    return requestErrors.invalidJson(field ? `Invalid value at '${field}' (TYPE_${expected})` : `Expected a JSON ${issue.params.type}.`);
  }
  return requestErrors.invalidArgument(`Invalid value at '${field || 'body'}': ${issue.message ?? 'not allowed'}`);
}

export function handleError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error, request.routeOptions.bodyLimit);
  // 501 answers a feature Hearth lacks: the caller's business, not a fault worth a stack trace.
  if (apiError.status === 'UNIMPLEMENTED') request.log.info({ status: apiError.httpStatus, message: apiError.wireMessage }, 'unimplemented');
  else if (apiError.httpStatus >= 500) request.log.error({ err: error }, 'request failed');
  void reply.status(apiError.httpStatus).type('application/json; charset=utf-8').send(apiError.toBody());
}
