/**
 * Which of its schemes the facilitator offers now. A scheme that needs something on the chain (its
 * contracts: `missingOnChain`) is offered once the chain is read and holds it; until then
 * `/supported` leaves it out and its requests are refused `unsupported_scheme`, saying why.
 *
 * - Missing on the chain: left out until the process restarts, with one warning naming what is
 *   missing (a contract deployed later is picked up by the next start).
 * - The chain could not be read (at start, or at the first request before any start): left out,
 *   with one warning, and read again every `retryMs` once started, at each request naming the
 *   scheme and at each `/supported`, until it can be read: nothing is offered that might not settle.
 * A facilitator never started reads the chain at its first `/supported` or request of the scheme.
 */
import type { Logger } from '../log';
import { safeError } from './chain';
import type { FacilitatorScheme } from './scheme';

type Standing = { state: 'offered' } | { state: 'unchecked' } | { state: 'missing'; why: string } | { state: 'unreadable'; why: string };

export interface SchemeOffering {
  /** Every scheme the facilitator builds, offered or not (what one stored stays readable). */
  readonly schemes: readonly FacilitatorScheme[];
  /** The schemes offered now, in their order. */
  offered(): FacilitatorScheme[];
  /**
   * The schemes offered, as `/supported` lists them: after reading the chain for a scheme never
   * checked; for one whose check could not read the chain, what is known now, with a new check
   * begun for the next call.
   */
  listed(): Promise<FacilitatorScheme[]>;
  /** The scheme `id` when it is offered, reading the chain first when that has not been done (or could not be). */
  find(id: string): Promise<FacilitatorScheme | undefined>;
  /** Why the scheme `id` is not offered now; undefined when it is, or when no scheme has that id. */
  withheld(id: string): string | undefined;
  /**
   * Reads the chain for the schemes not checked yet or whose check could not read it (one pass at
   * a time), starts the background work of those now offered, and reads again every `retryMs`
   * while one could not be read.
   */
  start(): Promise<void>;
  /** No more checks, and no scheme started from here on. */
  stop(): void;
}

export function createSchemeOffering(schemes: readonly FacilitatorScheme[], logger: Logger, retryMs: number): SchemeOffering {
  const standing = new Map<FacilitatorScheme, Standing>(
    schemes.map((scheme) => [scheme, scheme.missingOnChain ? { state: 'unchecked' } : { state: 'offered' }]),
  );
  const pending = () => schemes.filter((s) => ['unchecked', 'unreadable'].includes(standing.get(s)?.state ?? ''));
  let started = false;
  let stopped = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<void> | undefined;

  const checkOne = async (scheme: FacilitatorScheme) => {
    const before = standing.get(scheme);
    let missing: string | undefined;
    try {
      missing = await scheme.missingOnChain?.();
    } catch (error) {
      const why = 'the chain could not be read to find its contracts';
      if (before?.state !== 'unreadable') {
        logger.warn(`${scheme.id} is not offered until the chain can be read: checking again every ${retryMs} ms and at its next request`, {
          scheme: scheme.id,
          error: safeError(error),
        });
      }
      standing.set(scheme, { state: 'unreadable', why });
      return;
    }
    if (missing !== undefined) {
      logger.warn(`${scheme.id} is not offered: ${missing}; its requests are refused unsupported_scheme until a restart finds it`, {
        scheme: scheme.id,
      });
      standing.set(scheme, { state: 'missing', why: missing });
      return;
    }
    standing.set(scheme, { state: 'offered' });
    if (before?.state === 'unreadable') logger.info(`${scheme.id} is offered: the chain holds its contracts`, { scheme: scheme.id });
    if (started && !stopped) scheme.start?.();
  };

  const offered = () => schemes.filter((s) => standing.get(s)?.state === 'offered');

  /** One pass over the schemes not settled yet; a caller arriving during a pass waits for it. */
  const check = (): Promise<void> => {
    running ??= Promise.all(pending().map(checkOne))
      .then(() => {
        if (pending().length === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  /** A pass begun after this call: one already under way may have met the chain before it could be read. */
  const checkAfresh = async () => {
    if (running) await running;
    await check();
  };

  return {
    schemes,
    offered,
    async listed() {
      if (schemes.some((s) => standing.get(s)?.state === 'unchecked')) await check();
      else if (pending().length > 0) void check();
      return offered();
    },
    async find(id) {
      const scheme = schemes.find((s) => s.id === id);
      if (!scheme) return undefined;
      if (['unchecked', 'unreadable'].includes(standing.get(scheme)?.state ?? '')) await checkAfresh();
      return standing.get(scheme)?.state === 'offered' ? scheme : undefined;
    },
    withheld(id) {
      const scheme = schemes.find((s) => s.id === id);
      const now = scheme && standing.get(scheme);
      if (!now || now.state === 'offered') return undefined;
      return now.state === 'unchecked' ? 'its contracts are not checked yet' : now.why;
    },
    async start() {
      await check();
      started = true;
      for (const scheme of schemes) if (standing.get(scheme)?.state === 'offered') scheme.start?.();
      if (pending().length > 0 && !stopped) {
        timer ??= setInterval(() => void check(), retryMs);
        timer.unref?.();
      }
    },
    stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
