/**
 * The one typed error value every layer throws. Only `http/error-handler.ts` turns it into bytes,
 * so the Google error shape lives in one place.
 */
export type GoogleStatus =
  | 'INVALID_ARGUMENT'
  | 'FAILED_PRECONDITION'
  | 'OUT_OF_RANGE'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'ABORTED'
  | 'ALREADY_EXISTS'
  | 'RESOURCE_EXHAUSTED'
  | 'CANCELLED'
  | 'UNIMPLEMENTED'
  | 'INTERNAL'
  | 'UNAVAILABLE';

/** google.rpc.Code: the numbers gRPC statuses and in-band Status messages carry. */
const rpcCodes: Record<GoogleStatus, number> = {
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
};

/** The google.rpc.Code of a status; UNKNOWN (2) without one. */
export function rpcCodeOf(status: GoogleStatus | undefined): number {
  return status ? rpcCodes[status] : 2;
}

export interface GoogleErrorBody {
  error: {
    code: number;
    message: string;
    status?: GoogleStatus;
    errors?: Array<{ message: string; domain: string; reason: string }>;
  };
}

export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    /** The wire message, e.g. `EMAIL_EXISTS` or `WEAK_PASSWORD : Password should be ...`. */
    readonly wireMessage: string,
    readonly status?: GoogleStatus,
    /** Identity Toolkit answers carry an `errors` array; generic Google answers do not. */
    readonly withErrorsArray = false,
  ) {
    super(wireMessage);
    this.name = 'ApiError';
  }

  /** As a google.rpc.Status: what gRPC, Listen target causes and batchWrite statuses carry. */
  toRpcStatus(): { code: number; message: string } {
    return { code: rpcCodeOf(this.status), message: this.wireMessage };
  }

  toBody(): GoogleErrorBody {
    const body: GoogleErrorBody = { error: { code: this.httpStatus, message: this.wireMessage } };
    if (this.status) body.error.status = this.status;
    if (this.withErrorsArray) {
      body.error.errors = [{ message: this.wireMessage, domain: 'global', reason: reasonFor(this.httpStatus) }];
    }
    return body;
  }
}

function reasonFor(httpStatus: number): string {
  if (httpStatus === 401) return 'authError';
  if (httpStatus === 403) return 'forbidden';
  if (httpStatus === 404) return 'notFound';
  if (httpStatus === 429) return 'rateLimitExceeded';
  if (httpStatus >= 500) return 'backendError';
  return 'invalid';
}

/** Errors that are about the request itself rather than any one product. */
export const requestErrors = {
  invalidArgument: (message: string) => new ApiError(400, message, 'INVALID_ARGUMENT'),
  invalidJson: (detail: string) =>
    new ApiError(400, `Invalid JSON payload received. ${detail}`, 'INVALID_ARGUMENT'),
  unknownField: (name: string) =>
    new ApiError(400, `Invalid JSON payload received. Unknown name "${name}": Cannot find field.`, 'INVALID_ARGUMENT'),
  payloadTooLarge: (limitBytes: number) =>
    new ApiError(413, `Request payload size exceeds the limit: ${limitBytes} bytes.`, 'INVALID_ARGUMENT'),
  unsupportedMediaType: (type: string) =>
    new ApiError(415, `Unsupported content type: ${type}`, 'INVALID_ARGUMENT'),
  notFound: (what: string) => new ApiError(404, what, 'NOT_FOUND'),
  internal: () => new ApiError(500, 'Internal error encountered.', 'INTERNAL'),
};
