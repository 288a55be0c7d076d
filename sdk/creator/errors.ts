/**
 * The errors the creator SDK throws. Each says what to change; none ever carries a secret
 * (API keys and private keys are never part of a message).
 */

/** A skill definition that cannot work: bad price, schema, groups or timeout. Thrown by `skill()`. */
export class SkillDefinitionError extends Error {
  override readonly name = 'SkillDefinitionError';
}

/** `serve()` cannot start: no skills, no wallet, a malformed option. */
export class ServeConfigError extends Error {
  override readonly name = 'ServeConfigError';
}

/** Registration failed with `onError: 'throw'`; `results` holds one outcome per skill. */
export class RegistrationError extends Error {
  override readonly name = 'RegistrationError';
  constructor(
    message: string,
    readonly results: readonly { name: string; success: boolean; slug?: string; error?: string }[],
  ) {
    super(message);
  }
}

/**
 * The registry refused a request or answered something unexpected. `status` is 0 when no answer
 * arrived (network error, timeout); `retryable` is true for 0, 429 and 5xx.
 */
export class RegistryApiError extends Error {
  override readonly name = 'RegistryApiError';
  readonly retryable: boolean;
  constructor(
    readonly status: number,
    message: string,
    /** The first 200 characters of the answer, for diagnosis. */
    readonly body = '',
    /** The server's Retry-After, in ms, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.retryable = status === 0 || status === 429 || status >= 500;
  }
}

/** The payment facilitator could not be reached or answered something unexpected. */
export class FacilitatorUnavailableError extends Error {
  override readonly name = 'FacilitatorUnavailableError';
}

/** A handler ran past its `timeout`; the call was answered 504 and not charged. */
export class SkillTimeoutError extends Error {
  override readonly name = 'SkillTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`Skill timed out after ${timeoutMs} ms`);
  }
}

/** The first 200 characters of a text, for error messages. */
export function excerpt(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
