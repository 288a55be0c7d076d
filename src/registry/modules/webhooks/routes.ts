import { Elysia, t } from 'elysia';
import * as m from 'skill-market/registry';
import type { ServiceContext } from '../../context';
import { authPlugin } from '../auth';
import { createWebhook, deleteWebhook, listDeliveries, listWebhooks, redeliver, sendTestEvent, updateWebhook } from './service';

const tags = ['Webhooks'];
const success = { success: true as const };

/** The signed-in account's webhook endpoints (a session only, like API keys: a leaked key cannot redirect events). */
export function webhookRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'webhook-routes', prefix: '/webhooks' })
    .use(authPlugin(ctx))
    .post(
      '',
      ({ principal, body, set }) => {
        set.status = 201;
        return createWebhook(ctx, principal.userId, body);
      },
      {
        auth: 'account',
        body: m.CreateWebhook,
        response: { 201: m.CreatedWebhook },
        detail: { tags, summary: 'Add a webhook endpoint (its signing secret is in this answer only)' },
      },
    )
    .get('', ({ principal }) => listWebhooks(ctx, principal.userId), {
      auth: 'account',
      response: m.WebhookList,
      detail: { tags, summary: 'Your webhook endpoints (never their secrets)' },
    })
    .patch('/:id', ({ principal, params, body }) => updateWebhook(ctx, principal.userId, params.id, body), {
      auth: 'account',
      params: m.IdParam,
      body: m.UpdateWebhook,
      response: m.WebhookView,
      detail: { tags, summary: 'Change the URL or the events, or turn an endpoint on or off' },
    })
    .delete(
      '/:id',
      async ({ principal, params }) => {
        await deleteWebhook(ctx, principal.userId, params.id);
        return success;
      },
      { auth: 'account', params: m.IdParam, response: m.Success, detail: { tags, summary: 'Remove an endpoint and its delivery log' } },
    )
    .get('/:id/deliveries', ({ principal, params }) => listDeliveries(ctx, principal.userId, params.id), {
      auth: 'account',
      params: m.IdParam,
      response: m.WebhookDeliveryList,
      detail: { tags, summary: 'The latest deliveries to an endpoint, each with its attempts' },
    })
    .post(
      '/:id/test',
      async ({ principal, params }) => {
        await sendTestEvent(ctx, principal.userId, params.id);
        return success;
      },
      { auth: 'account', params: m.IdParam, response: m.Success, detail: { tags, summary: 'Send a webhook.test event to this endpoint' } },
    )
    .post(
      '/:id/deliveries/:deliveryId/retry',
      async ({ principal, params }) => {
        await redeliver(ctx, principal.userId, params.id, params.deliveryId);
        return success;
      },
      {
        auth: 'account',
        params: t.Object({ id: m.IdParam.properties.id, deliveryId: m.IdParam.properties.id }),
        response: m.Success,
        detail: { tags, summary: 'Send a delivery again now (same webhook-id)' },
      },
    );
}
