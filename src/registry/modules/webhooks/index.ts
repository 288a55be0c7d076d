/**
 * Webhooks: a creator's endpoints hear about their money and their skills (call.paid,
 * review.created, key.revoked, skill.down/up), signed by the Standard Webhooks convention, stored before they
 * are sent and retried for about a day, with a delivery log. The routes (routes.ts) are mounted
 * by the app itself, so modules that emit events (auth among them) import no route of this one.
 */
export { emitEvent } from './events';
export { createWebhookDeliverer, DISABLE_AFTER, RETRY_SCHEDULE_SECONDS } from './delivery';
