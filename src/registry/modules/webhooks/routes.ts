import { Elysia } from 'elysia';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import type { ServiceContext } from '../../context';
import { routeHooks } from '../../../http';
import { authPlugin } from '../auth';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, redeliver, sendTestEvent, updateWebhook } from './service';

const success = { success: true as const };
const {
  createWebhook: create,
  webhooks,
  updateWebhook: update,
  deleteWebhook: remove,
  webhookDeliveries: deliveries,
  testWebhook: test,
  redeliverWebhook: redeliverRoute,
} = REGISTRY_ROUTES;

/** The signed-in account's webhook endpoints (a session only, like API keys: a leaked key cannot redirect events). */
export function webhookRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'webhook-routes' })
    .use(authPlugin(ctx))
    .route(
      create.method,
      create.path,
      ({ principal, body, set }) => {
        set.status = 201;
        return createWebhook(ctx, principal.userId, body);
      },
      routeHooks(create),
    )
    .route(webhooks.method, webhooks.path, ({ principal }) => listWebhooks(ctx, principal.userId), routeHooks(webhooks))
    .route(
      update.method,
      update.path,
      ({ principal, params, body }) => updateWebhook(ctx, principal.userId, params.id, body),
      routeHooks(update),
    )
    .route(
      remove.method,
      remove.path,
      async ({ principal, params }) => {
        await deleteWebhook(ctx, principal.userId, params.id);
        return success;
      },
      routeHooks(remove),
    )
    .route(
      deliveries.method,
      deliveries.path,
      ({ principal, params }) => listDeliveries(ctx, principal.userId, params.id),
      routeHooks(deliveries),
    )
    .route(
      test.method,
      test.path,
      async ({ principal, params }) => {
        await sendTestEvent(ctx, principal.userId, params.id);
        return success;
      },
      routeHooks(test),
    )
    .route(
      redeliverRoute.method,
      redeliverRoute.path,
      async ({ principal, params }) => {
        await redeliver(ctx, principal.userId, params.id, params.deliveryId);
        return success;
      },
      routeHooks(redeliverRoute),
    );
}
