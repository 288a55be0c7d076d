/**
 * Webhooks: a creator's endpoints hear about their money and their skills (call.paid,
 * review.created, key.revoked, skill.down/up), signed by the Standard Webhooks convention, stored before they
 * are sent and retried for about a day, with a delivery log. Other modules emit events through the
 * leaf module `webhook-events`, never through this one: its routes stand on auth, which emits key.revoked.
 */
export { createWebhookDeliverer, DELIVERY_LIMITS, DISABLE_AFTER, READ_LIMIT_BYTES, RETRY_SCHEDULE_SECONDS } from './delivery';
export { webhookBacklog } from './backlog';
export type { Verdict as DeliveryVerdict } from './delivery';
