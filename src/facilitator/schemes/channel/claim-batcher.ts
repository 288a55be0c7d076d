/**
 * Claims the facilitator authorizes (the channels name its receiver authorizer) wait a short
 * window and go out together: the rows of every claim request queued meanwhile, from one resource
 * server or many, in one `claimWithSignature` transaction that the facilitator's authorizer signs
 * over all of them. Each request was simulated alone before it was queued; should the merged
 * batch not simulate (a channel changed meanwhile), each request is sent on its own instead, so
 * one bad request never sinks the others. Every request gets the outcome of the transaction that
 * carried its rows.
 */
import type { VoucherClaim } from 'skill-market/x402';

export interface ClaimBatcherSettings {
  /** Longest wait of the first queued request before its batch is sent. */
  windowMs: number;
  /** Rows per transaction; the queue is sent as soon as it holds this many. */
  maxRows: number;
}

interface Job<T> {
  claims: readonly VoucherClaim[];
  resolve(outcome: T): void;
  reject(error: unknown): void;
}

export interface ClaimBatcher<T> {
  submit(claims: readonly VoucherClaim[]): Promise<T>;
  /** Sends what is queued now (the facilitator is stopping). */
  drain(): void;
}

export function createClaimBatcher<T>(
  settings: ClaimBatcherSettings,
  /** Why these rows would not claim together, undefined when they would. */
  simulate: (claims: readonly VoucherClaim[]) => Promise<string | undefined>,
  /** Signs, records and sends one claim transaction of these rows. */
  send: (claims: readonly VoucherClaim[]) => Promise<T>,
): ClaimBatcher<T> {
  let queue: Job<T>[] = [];
  let rows = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const run = async (jobs: Job<T>[]) => {
    const claims = jobs.flatMap((j) => j.claims);
    const groups = jobs.length > 1 && (await simulate(claims).catch(() => 'unknown')) !== undefined ? jobs.map((j) => [j]) : [jobs];
    await Promise.all(
      groups.map(async (group) => {
        try {
          const outcome = await send(group.flatMap((j) => j.claims));
          for (const job of group) job.resolve(outcome);
        } catch (error) {
          for (const job of group) job.reject(error);
        }
      }),
    );
  };

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const jobs = queue;
    queue = [];
    rows = 0;
    if (jobs.length > 0) void run(jobs);
  };

  return {
    submit(claims) {
      return new Promise<T>((resolve, reject) => {
        if (rows > 0 && rows + claims.length > settings.maxRows) flush();
        queue.push({ claims, resolve, reject });
        rows += claims.length;
        if (rows >= settings.maxRows) flush();
        else timer ??= setTimeout(flush, settings.windowMs);
      });
    },
    drain: flush,
  };
}
