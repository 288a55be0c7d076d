/**
 * Webhooks: a creator's endpoints hear about their money and their skills (call.paid,
 * review.created), signed by the Standard Webhooks convention, stored before they
 * are sent and retried for about a day, with a delivery log.
 */
export { emitEvent } from './events';
export { createWebhookDeliverer, DISABLE_AFTER, RETRY_SCHEDULE_SECONDS } from './delivery';
export { webhookRoutes } from './routes';
