/** Webhook endpoints of the signed-in account: create (the secret shown once), list, change, delete, and their delivery log. */
import { randomBytes } from 'node:crypto';
import { and, desc, eq, inArray } from 'drizzle-orm';
import type { CreateWebhook, UpdateWebhook, WebhookDeliveryView, WebhookView } from 'skill-market/registry';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../../db/schema';
import { AppError } from '../../../http';
import type { ServiceContext } from '../../context';
import { checkHost, resolveWithDns, type Resolve } from '../../../net';
import { emitEvent } from '../webhook-events';

type EndpointRow = typeof webhookEndpoints.$inferSelect;

/** Endpoints per account. */
const MAX_ENDPOINTS = 10;

function toView(row: EndpointRow): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * https (http too where private addresses are allowed: a local marketplace, tests), no credentials
 * in it, and, unless private addresses are allowed, a host that resolves to public addresses only
 * (checked again at each delivery, whose request goes to the address checked).
 */
async function checkUrl(ctx: ServiceContext, raw: string, resolve: Resolve): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('VALIDATION', 'url must be an absolute https URL');
  }
  const local = ctx.config.health.allowPrivateAddresses;
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:')) throw new AppError('VALIDATION', 'url must be an https URL');
  if (url.username || url.password) throw new AppError('VALIDATION', 'url must not carry credentials');
  if (!local) {
    const host = await checkHost(url.hostname, resolve);
    if (host.type === 'refused') throw new AppError('VALIDATION', `url must reach a public address: ${host.reason}`);
  }
  return url.href;
}

export async function createWebhook(ctx: ServiceContext, userId: string, input: CreateWebhook, resolve: Resolve = resolveWithDns) {
  const url = await checkUrl(ctx, input.url, resolve);
  const existing = await ctx.db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(eq(webhookEndpoints.userId, userId));
  if (existing.length >= MAX_ENDPOINTS) throw new AppError('CONFLICT', `At most ${MAX_ENDPOINTS} webhook endpoints per account`);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const now = ctx.clock.now();
  const [row] = await ctx.db
    .insert(webhookEndpoints)
    .values({ userId, url, events: [...input.events], secret, createdAt: now, updatedAt: now })
    .returning();
  return { ...toView(row!), secret };
}

export async function listWebhooks(ctx: ServiceContext, userId: string): Promise<WebhookView[]> {
  const rows = await ctx.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.userId, userId)).orderBy(webhookEndpoints.createdAt);
  return rows.map(toView);
}

async function owned(ctx: ServiceContext, userId: string, id: string): Promise<EndpointRow> {
  const [row] = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.userId, userId)));
  if (!row) throw new AppError('NOT_FOUND', 'Webhook not found');
  return row;
}

export async function updateWebhook(
  ctx: ServiceContext,
  userId: string,
  id: string,
  input: UpdateWebhook,
  resolve: Resolve = resolveWithDns,
): Promise<WebhookView> {
  await owned(ctx, userId, id);
  const set: Partial<typeof webhookEndpoints.$inferInsert> = { updatedAt: ctx.clock.now() };
  if (input.url !== undefined) set.url = await checkUrl(ctx, input.url, resolve);
  if (input.events !== undefined) set.events = [...input.events];
  if (input.enabled !== undefined) {
    set.enabled = input.enabled;
    if (input.enabled) Object.assign(set, { disabledReason: null, failedInRow: 0 });
  }
  const [row] = await ctx.db.update(webhookEndpoints).set(set).where(eq(webhookEndpoints.id, id)).returning();
  return toView(row!);
}

export async function deleteWebhook(ctx: ServiceContext, userId: string, id: string): Promise<void> {
  await owned(ctx, userId, id);
  await ctx.db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, id));
}

/** Queues a `webhook.test` event for this endpoint alone (whatever its events and state). */
export async function sendTestEvent(ctx: ServiceContext, userId: string, id: string): Promise<void> {
  await owned(ctx, userId, id);
  await emitEvent(ctx.db, {
    userId,
    type: 'webhook.test',
    data: { message: 'A test event from the marketplace' },
    at: ctx.clock.now(),
    only: id,
  });
}

/** Sends a delivery again: due now, its attempts kept in the log (same webhook-id). */
export async function redeliver(ctx: ServiceContext, userId: string, id: string, deliveryId: string): Promise<void> {
  await owned(ctx, userId, id);
  const now = ctx.clock.now();
  const rows = await ctx.db
    .update(webhookDeliveries)
    .set({ status: 'pending', nextAttemptAt: now, lockedUntil: null, updatedAt: now })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.endpointId, id)))
    .returning({ id: webhookDeliveries.id });
  if (rows.length === 0) throw new AppError('NOT_FOUND', 'Delivery not found');
}

export async function listDeliveries(ctx: ServiceContext, userId: string, id: string): Promise<WebhookDeliveryView[]> {
  await owned(ctx, userId, id);
  const deliveries = await ctx.db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.endpointId, id))
    .orderBy(desc(webhookDeliveries.createdAt))
    .limit(50);
  const attempts =
    deliveries.length === 0
      ? []
      : await ctx.db
          .select()
          .from(webhookAttempts)
          .where(
            inArray(
              webhookAttempts.deliveryId,
              deliveries.map((d) => d.id),
            ),
          )
          .orderBy(desc(webhookAttempts.at));
  return deliveries.map((d) => ({
    id: d.id,
    eventId: d.eventId,
    type: d.type,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
    createdAt: d.createdAt.toISOString(),
    log: attempts
      .filter((a) => a.deliveryId === d.id)
      .map((a) => ({ at: a.at.toISOString(), status: a.status, latencyMs: a.latencyMs, excerpt: a.excerpt })),
  }));
}
