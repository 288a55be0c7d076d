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
