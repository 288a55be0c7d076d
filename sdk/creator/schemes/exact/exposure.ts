/**
 * Settlement mode of the skill server and the creator's bound on unconfirmed value.
 *
 * In `broadcast` mode a paid call's result leaves once the facilitator has verified, simulated,
 * signed and broadcast the transfer, not once it is mined: the block wait (up to 2 s on Base)
 * leaves the paid call. Until its transfer is confirmed, a payment is value at risk. This keeps the
 * risk bounded: each broadcast payment counts against its payer and its skill until the facilitator
 * says it settled (asked once, shortly after, off the response path, again with back-off while
 * pending; payments due together are asked about in one `POST /settlements`); a call that would take either total over its cap waits for its receipt instead
 * (`confirmed` for that call). A payment that failed after its answer (the payer moved their funds
 * away in between) is logged, and that payer is refused here for a while.
 */
import {
  FACILITATOR_REASONS,
  parsePrice,
  SETTLEMENT_MODES,
  type DecodedPayment,
  type PaymentRequirements,
  type SettlementMode,
} from '../../../x402/index';
import { ServeConfigError } from '../../errors';
import type { FacilitatorClient, SettlementOutcome } from '../../facilitator-client';
import { errorText, type CreatorLogger } from '../../logger';

/** `serve({ settlement })`: the mode, and (broadcast) the caps of unconfirmed value in atomic units. */
export interface SettlementSettings {
  mode: SettlementMode;
  /** Most unconfirmed value per payer. */
  maxUnconfirmedPerPayer: bigint;
  /** Most unconfirmed value per skill. */
  maxUnconfirmedPerSkill: bigint;
  /** First confirmation check this long after the answer, ms; default 1000. */
  firstCheckMs?: number;
}

/**
 * `serve({ settlement })` / `createSkillHandler({ settlement })`: a mode, or the mode with caps
 * of unconfirmed value as prices (`'$1'`, `'0.5'`). Default `broadcast`, at most $1 unconfirmed
 * per payer and $10 per skill (see docs/creators.md, settlement modes: why broadcast is the default). `firstCheckMs`: how long
 * after an answer the facilitator is first asked whether its payment was confirmed, ms, the pause
 * doubling while it is pending (default 1000).
 * @example serve(skills, { settlement: { mode: 'broadcast', maxUnconfirmedPerPayer: '$0.25' } })
 */
export type SettlementOption =
  | SettlementMode
  | { mode?: SettlementMode; maxUnconfirmedPerPayer?: string | number; maxUnconfirmedPerSkill?: string | number; firstCheckMs?: number };

/**
 * The settlement a skill server uses without a `settlement` option: `broadcast`, at most $1 of
 * unconfirmed payments per payer and $10 per skill.
 *
 * @example
 * await serve({ wordCount }, { settlement: { ...DEFAULT_SETTLEMENT, maxUnconfirmedPerPayer: '$0.25' } });
 */
export const DEFAULT_SETTLEMENT = { mode: 'broadcast', maxUnconfirmedPerPayer: '$1', maxUnconfirmedPerSkill: '$10' } as const;

/** The settings of a {@link SettlementOption} for a token with `decimals`; ServeConfigError on a bad value. */
export function settlementSettings(option: SettlementOption | undefined, decimals: number): SettlementSettings {
  const given = typeof option === 'string' ? { mode: option } : (option ?? {});
  const mode = given.mode ?? DEFAULT_SETTLEMENT.mode;
  if (!(SETTLEMENT_MODES as readonly string[]).includes(mode)) {
    throw new ServeConfigError(`settlement mode must be one of ${SETTLEMENT_MODES.join(', ')}`);
  }
  const cap = (value: string | number, name: string) => {
    try {
      return parsePrice(value, decimals);
    } catch (error) {
      throw new ServeConfigError(`settlement.${name}: ${errorText(error)}`);
    }
  };
  const { firstCheckMs } = given as { firstCheckMs?: number };
  if (firstCheckMs !== undefined && (!Number.isInteger(firstCheckMs) || firstCheckMs < 1)) {
    throw new ServeConfigError('settlement.firstCheckMs must be a whole number of ms above 0');
  }
  return {
    mode,
    maxUnconfirmedPerPayer: cap(given.maxUnconfirmedPerPayer ?? DEFAULT_SETTLEMENT.maxUnconfirmedPerPayer, 'maxUnconfirmedPerPayer'),
    maxUnconfirmedPerSkill: cap(given.maxUnconfirmedPerSkill ?? DEFAULT_SETTLEMENT.maxUnconfirmedPerSkill, 'maxUnconfirmedPerSkill'),
    ...(firstCheckMs !== undefined ? { firstCheckMs } : {}),
  };
}

/** A broadcast payment waiting for its confirmation. */
interface UnconfirmedPayment {
  skill: string;
  payment: DecodedPayment;
  requirements: PaymentRequirements;
  amount: bigint;
  transaction: string;
}

/** A confirmation check also takes the payments due this soon after it, so they share its request. */
const COALESCE_MS = 250;

export interface ExposureOptions {
  settings: SettlementSettings;
  facilitator: FacilitatorClient;
  logger: CreatorLogger;
  now?: () => number;
  /** First confirmation check this long after the answer, doubling while pending; default 1000 ms. */
  firstCheckMs?: number;
  /** Longest wait between checks; default 10 000 ms. */
  maxCheckMs?: number;
  /** How long a payer whose payment failed after its answer is refused; default 24 h. */
  refusalMs?: number;
}

export interface Exposure {
  /**
   * The mode this call settles in: `broadcast` only while both caps leave room for `amount`, which
   * is then reserved: follow with {@link watch} (answered before its confirmation) or {@link release}.
   */
  reserve(skill: string, payer: string, amount: bigint): SettlementMode;
  /** Gives back a reservation whose payment was not answered before its confirmation. */
  release(skill: string, payer: string, amount: bigint): void;
  /** Keeps a reserved payment counted until the facilitator confirms it. */
  watch(payment: UnconfirmedPayment): void;
  /** The reason to refuse this payer (a payment of theirs failed after its answer), or undefined. */
  refusal(payer: string): string | undefined;
  /** Unconfirmed value of a payer (atomic units). */
  unconfirmedOf(payer: string): bigint;
  /** Asks the facilitator nothing more (the server stops). */
  stop(): void;
}

export function createExposure(options: ExposureOptions): Exposure {
  const { settings, facilitator, logger } = options;
  const now = options.now ?? Date.now;
  const firstCheckMs = options.firstCheckMs ?? settings.firstCheckMs ?? 1000;
  const maxCheckMs = options.maxCheckMs ?? 10_000;
  const refusalMs = options.refusalMs ?? 24 * 60 * 60 * 1000;
  const byPayer = new Map<string, bigint>();
  const bySkill = new Map<string, bigint>();
  const refused = new Map<string, number>();

  const change = (map: Map<string, bigint>, key: string, delta: bigint) => {
    const value = (map.get(key) ?? 0n) + delta;
    if (value <= 0n) map.delete(key);
    else map.set(key, value);
  };

  const settle = (entry: UnconfirmedPayment, payer: string) => {
    change(byPayer, payer, -entry.amount);
    change(bySkill, entry.skill, -entry.amount);
  };

  /** Payments awaiting a confirmation check, each due at `at` (ms); checked together, one request per tick. */
  let due: { entry: UnconfirmedPayment; at: number; delay: number }[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  const outcome = (entry: UnconfirmedPayment, delay: number, told: SettlementOutcome | undefined) => {
    const payer = entry.payment.authorization.from.toLowerCase();
    // `unknown`: a facilitator that cannot tell (it answers settle only once the transfer is mined);
    // `none`: one that lost the record of a settle it answered (nothing left to wait for).
    if (told?.status === 'settled' || told?.status === 'unknown' || told?.status === 'none') return settle(entry, payer);
    if (told?.status === 'failed') {
      settle(entry, payer);
      refused.set(payer, now() + refusalMs);
      logger.warn('a payment failed after its result was sent; the payer is refused from now on', {
        skill: entry.skill,
        payer: entry.payment.authorization.from,
        transaction: entry.transaction || undefined,
        reason: told.reason,
      });
      return;
    }
    const next = Math.min(delay * 2, maxCheckMs);
    due.push({ entry, at: Date.now() + next, delay: next });
  };

  const tick = async () => {
    timer = undefined;
    // What falls due within a moment goes along: fewer, fuller requests.
    const cutoff = Date.now() + COALESCE_MS;
    const ready = due.filter((d) => d.at <= cutoff);
    due = due.filter((d) => d.at > cutoff);
    let told: (SettlementOutcome | undefined)[] = ready.map(() => undefined);
    try {
      told = await facilitator.settlements(
        ready.map(({ entry }) => ({
          requirements: entry.requirements,
          payer: entry.payment.authorization.from,
          nonce: entry.payment.authorization.nonce,
        })),
      );
    } catch (error) {
      logger.warn('payment confirmation check failed', { payments: ready.length, error: errorText(error) });
    }
    for (const [i, d] of ready.entries()) outcome(d.entry, d.delay, told[i]);
    schedule();
  };

  const schedule = () => {
    if (stopped || timer || due.length === 0) return;
    const first = due.reduce((min, d) => Math.min(min, d.at), Number.POSITIVE_INFINITY);
    timer = setTimeout(() => void tick(), Math.max(0, first - Date.now()));
    (timer as { unref?: () => void }).unref?.();
  };

  return {
    reserve(skill, payer, amount) {
      if (settings.mode === 'confirmed') return 'confirmed';
      const key = payer.toLowerCase();
      if ((byPayer.get(key) ?? 0n) + amount > settings.maxUnconfirmedPerPayer) return 'confirmed';
      if ((bySkill.get(skill) ?? 0n) + amount > settings.maxUnconfirmedPerSkill) return 'confirmed';
      change(byPayer, key, amount);
      change(bySkill, skill, amount);
      return 'broadcast';
    },
    release(skill, payer, amount) {
      change(byPayer, payer.toLowerCase(), -amount);
      change(bySkill, skill, -amount);
    },
    watch(entry) {
      due.push({ entry, at: Date.now() + firstCheckMs, delay: firstCheckMs });
      schedule();
    },
    refusal(payer) {
      const key = payer.toLowerCase();
      const until = refused.get(key);
      if (until === undefined) return undefined;
      if (until > now()) return FACILITATOR_REASONS.payerReverted;
      refused.delete(key);
      return undefined;
    },
    unconfirmedOf: (payer) => byPayer.get(payer.toLowerCase()) ?? 0n,
    stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
