/**
 * Sending stored deliveries (Standard Webhooks): a due delivery is taken with a lease (one
 * conditional update; `for update skip locked`, so several registry instances never send one at
 * once), POSTed with `webhook-id`, `webhook-timestamp` and `webhook-signature` (the endpoint's
 * secret), and its attempt logged. A 2xx delivers it; anything else is tried again after the
 * next pause of {@link RETRY_SCHEDULE_SECONDS} (about 27 hours in all), then it fails for good.
 * An endpoint whose deliveries fail for good {@link DISABLE_AFTER} times in a row is turned off,
 * with the reason shown to its owner. A registry stopped mid-send sends again after the lease
 * (the attempt's timeout and its margin, `leaseMarginMs`), with the same `webhook-id` (at least once,
 * as the convention allows). Deliveries of one endpoint that share an ordering key (events.ts)
 * go one at a time, in the order they were stored.
 *
 * Outside a local marketplace, the receiver's host is resolved, refused when it is not a public
 * address, and the request goes to the address checked (the SSRF guard of the health prober).
 */
import { and, eq, sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import type { Database } from '../../../db';
import { resultRows } from '../../../db/rows';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../../db/schema';
import { WEBHOOK_DEFAULTS } from '../../../config';
import type { Logger } from '../../../log';
import type { Clock } from '../../context';
import { checkHost, pinnedTarget, resolveWithDns, type PinnedTarget, type Resolve } from '../../lib/address-guard';

/** Pauses before the 2nd, 3rd, … attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const;
/** Deliveries failed for good in a row that turn an endpoint off. */
export const DISABLE_AFTER = 5;
const EXCERPT_CHARS = 200;

export interface WebhookDelivererDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  /** Send to loopback and private addresses (a local marketplace, tests). */
  allowPrivateAddresses: boolean;
  fetch?: typeof fetch;
  resolve?: Resolve;
  /** Per attempt; default 5000 ms. */
  timeoutMs?: number;
  /** A taken delivery stays taken this long past its attempt's timeout (the round's bookkeeping); default 10 000 ms. */
  leaseMarginMs?: number;
  /** Between background rounds; default 1000 ms. */
  intervalMs?: number;
}

export interface DeliveryRound {
  attempted: number;
  delivered: number;
  retrying: number;
  failed: number;
}

interface Due {
  id: string;
  event_id: string;
  payload: unknown;
  attempts: number;
  endpoint_id: string;
  url: string;
  secret: string;
}

export function createWebhookDeliverer(deps: WebhookDelivererDeps) {
  const { db, clock, logger } = deps;
  const send = deps.fetch ?? fetch;
  const resolve = deps.resolve ?? resolveWithDns;
  const timeoutMs = deps.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
  const leaseMarginMs = deps.leaseMarginMs ?? WEBHOOK_DEFAULTS.leaseMarginMs;
  let timer: ReturnType<typeof setInterval> | undefined;
  let running: Promise<DeliveryRound> | undefined;

  async function take(now: Date, limit: number): Promise<Due[]> {
    const lease = new Date(now.getTime() + timeoutMs + leaseMarginMs).toISOString();
    const at = now.toISOString();
    const result = await db.execute(sql`
      update webhook_deliveries d set locked_until = ${lease}::timestamptz, updated_at = ${at}::timestamptz
      from webhook_endpoints e
      where e.id = d.endpoint_id and d.id in (
        select id from webhook_deliveries w
        where status = 'pending' and next_attempt_at <= ${at}::timestamptz
          and (locked_until is null or locked_until <= ${at}::timestamptz)
          and not (w.ordering_key is not null and exists (
            select 1 from webhook_deliveries earlier
            where earlier.endpoint_id = w.endpoint_id and earlier.ordering_key = w.ordering_key
              and earlier.status = 'pending' and earlier.seq < w.seq))
        order by next_attempt_at limit ${limit}
        for update skip locked)
      returning d.id, d.event_id, d.payload, d.attempts, d.endpoint_id, e.url, e.secret`);
    return resultRows<Due>(result);
  }

  /** POSTs one delivery; the HTTP status (null when no answer came), latency and an excerpt. */
  async function post(due: Due, body: string, now: Date): Promise<{ status: number | null; latencyMs: number | null; excerpt: string }> {
    const url = new URL(due.url);
    const deadline = AbortSignal.timeout(timeoutMs);
    let target: PinnedTarget = { url, headers: {} };
    if (!deps.allowPrivateAddresses) {
      const host = await checkHost(url.hostname, resolve);
      if (host.type !== 'public') return { status: null, latencyMs: null, excerpt: host.reason };
      target = pinnedTarget(url, host.address);
    }
    const signature = new Webhook(due.secret).sign(due.event_id, now, body);
    const started = performance.now();
    try {
      const res = await send(target.url, {
        method: 'POST',
        redirect: 'manual',
        signal: deadline,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'skill-market-webhooks',
          'webhook-id': due.event_id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signature,
          ...target.headers,
        },
        ...(target.tls ? { tls: target.tls } : {}),
      });
      const text = (await res.text().catch(() => '')).slice(0, EXCERPT_CHARS);
      return { status: res.status, latencyMs: Math.round(performance.now() - started), excerpt: text };
    } catch (error) {
      const reason = deadline.aborted ? `no answer within ${timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      return { status: null, latencyMs: null, excerpt: reason.slice(0, EXCERPT_CHARS) };
    }
  }

  async function attempt(due: Due): Promise<'delivered' | 'retrying' | 'failed'> {
    const now = clock.now();
    const outcome = await post(due, JSON.stringify(due.payload), now);
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const attempts = due.attempts + 1;
    const pause = RETRY_SCHEDULE_SECONDS[attempts - 1];
    const verdict = ok ? 'delivered' : pause === undefined ? 'failed' : 'retrying';
    await db.transaction(async (tx) => {
      await tx.insert(webhookAttempts).values({ deliveryId: due.id, at: now, ...outcome });
      await tx
        .update(webhookDeliveries)
        .set({
          attempts,
          status: verdict === 'retrying' ? 'pending' : verdict,
          lockedUntil: null,
          updatedAt: now,
          ...(verdict === 'retrying' ? { nextAttemptAt: new Date(now.getTime() + (pause ?? 0) * 1000) } : {}),
          ...(verdict === 'delivered' ? { deliveredAt: now } : {}),
        })
        .where(eq(webhookDeliveries.id, due.id));
      if (verdict === 'delivered') {
        await tx.update(webhookEndpoints).set({ failedInRow: 0 }).where(eq(webhookEndpoints.id, due.endpoint_id));
      } else if (verdict === 'failed') {
        await tx
          .update(webhookEndpoints)
          .set({
            failedInRow: sql`${webhookEndpoints.failedInRow} + 1`,
            enabled: sql`${webhookEndpoints.failedInRow} + 1 < ${DISABLE_AFTER}`,
            disabledReason: sql`case when ${webhookEndpoints.failedInRow} + 1 >= ${DISABLE_AFTER}
              then ${`Turned off: ${DISABLE_AFTER} deliveries in a row failed after every retry (last: ${outcome.status ?? outcome.excerpt})`}
              else ${webhookEndpoints.disabledReason} end`,
            updatedAt: now,
          })
          .where(and(eq(webhookEndpoints.id, due.endpoint_id)));
      }
    });
    if (!ok) logger.info('webhook delivery failed', { endpoint: due.endpoint_id, attempt: attempts, status: outcome.status, verdict });
    return verdict;
  }

  /** One round: every due delivery (up to `limit`) attempted once, side by side. */
  async function round(limit = 50): Promise<DeliveryRound> {
    const due = await take(clock.now(), limit);
    const verdicts = await Promise.all(due.map(attempt));
    return {
      attempted: due.length,
      delivered: verdicts.filter((v) => v === 'delivered').length,
      retrying: verdicts.filter((v) => v === 'retrying').length,
      failed: verdicts.filter((v) => v === 'failed').length,
    };
  }

  const deliverDue = () => {
    running ??= round().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    /** One round now (a round already running is shared). */
    deliverDue,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        deliverDue().catch((error: unknown) => logger.warn('webhook delivery round failed', { error: String(error) }));
      }, deps.intervalMs ?? 1000);
      timer.unref?.();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running?.catch(() => undefined);
    },
  };
}
