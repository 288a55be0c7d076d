/**
 * Emitting a webhook event (call.paid, review.created, key.revoked, skill.down/up, …): stored with
 * the cause's transaction for the webhooks deliverer to send. A leaf: it imports no other module, so
 * every module that reports something (auth among them) uses it without depending on the webhooks
 * module, whose routes stand on auth.
 */
export { emitEvent, emitEvents } from './emit';
