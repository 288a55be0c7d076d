/**
 * The one error services throw. `message` is the text clients read in `error` (the interface
 * spec's wording where it has one); `code` is the machine code; the HTTP status follows the code.
 */
const ERROR_STATUS = {
  VALIDATION: 400,
  MALFORMED_BODY: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** For a 429 or 503: when to try again, sent as Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

/** The body of every error response. */
export interface ErrorBody {
  error: string;
  code: string;
  requestId: string;
  details?: unknown;
}
