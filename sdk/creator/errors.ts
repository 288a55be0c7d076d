/**
 * The errors the creator SDK throws, each a {@link MarketError} with its own code. Each says what
 * to change; none ever carries a secret (API keys and private keys are never part of a message).
 */
import { MarketError } from '../http/errors';

/**
 * A skill definition that cannot work: bad price, schema, groups or timeout. Thrown by `skill()`.
 *
 * @example
 * try {
 *   skill({ price: '$0.0000001' }, handler); // finer than one micro-USDC
 * } catch (error) {
 *   if (error instanceof SkillDefinitionError) console.error(error.message); // names the bad option
 * }
 */
export class SkillDefinitionError extends MarketError {
  override readonly name = 'SkillDefinitionError';
  declare readonly code: 'invalid_skill';

  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_skill', message, options);
  }
}

/**
 * `serve()` cannot start: no skills, no wallet, a malformed option.
 *
 * @example
 * try {
 *   await serve({ wordCount }, { network: 'mainnet' });
 * } catch (error) {
 *   if (error instanceof ServeConfigError) console.error(error.message); // e.g. 'network: Invalid network "mainnet": …'
 *   else throw error;
 * }
 */
export class ServeConfigError extends MarketError {
  override readonly name = 'ServeConfigError';
  declare readonly code: 'invalid_serve_config';

  constructor(message: string, options?: { cause?: unknown }) {
    super('invalid_serve_config', message, options);
  }
}

/**
 * The file channel store found its snapshot damaged (a changed byte, a truncated file): it does not
 * open, so no voucher is dropped unnoticed. The message names the file and the problem, and the way
 * out: restore the folder from a backup, or open it once with `repair` (`market serve --repair-channels`).
 *
 * @example
 * try {
 *   await serve(skills);
 * } catch (error) {
 *   if (error instanceof ChannelStoreDamagedError) console.error(error.message); // then: fileChannelStore(folder, { repair: true })
 *   else throw error;
 * }
 */
export class ChannelStoreDamagedError extends MarketError {
  override readonly name = 'ChannelStoreDamagedError';
  declare readonly code: 'channel_store_damaged';

  constructor(message: string) {
    super('channel_store_damaged', message);
  }
}

/**
 * Registration failed with `onError: 'throw'`; `results` holds one outcome per skill.
 *
 * @example
 * try {
 *   await serve({ wordCount }, { register: { endpoint: 'https://skills.example.com', onError: 'throw' } });
 * } catch (error) {
 *   if (error instanceof RegistrationError) for (const r of error.results) if (!r.success) console.error(r.name, r.error);
 * }
 */
export class RegistrationError extends MarketError {
  override readonly name = 'RegistrationError';
  declare readonly code: 'registration_failed';

  constructor(
    message: string,
    readonly results: readonly { name: string; success: boolean; slug?: string; error?: string }[],
  ) {
    super('registration_failed', message);
  }
}

/**
 * The payment facilitator could not be reached or answered something unexpected.
 *
 * @example
 * // Not thrown to your code: a paid call that finds the facilitator down is answered 503 ("nothing was
 * // charged") and the server's logger gets a warning with this error's message.
 * await serve({ wordCount }, { facilitatorUrl: 'https://facilitator.example', logger });
 */
export class FacilitatorUnavailableError extends MarketError {
  override readonly name = 'FacilitatorUnavailableError';
  declare readonly code: 'facilitator_unavailable';

  constructor(message: string, options?: { cause?: unknown }) {
    super('facilitator_unavailable', message, options);
  }
}

/**
 * A handler ran past its `timeout`; the call was answered 504 and not charged.
 *
 * @example
 * await serve({ render }, {
 *   onError: (name, error) => {
 *     if (error instanceof SkillTimeoutError) console.warn(`${name} ran past ${error.timeoutMs} ms; answered 504, not charged`);
 *   },
 * });
 */
export class SkillTimeoutError extends MarketError {
  override readonly name = 'SkillTimeoutError';
  declare readonly code: 'skill_timeout';

  constructor(readonly timeoutMs: number) {
    super('skill_timeout', `Skill timed out after ${timeoutMs} ms`);
  }
}
