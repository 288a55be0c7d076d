import { Elysia } from 'elysia';
import { REGISTRY_ROUTES } from 'skill-market/registry';
import type { ServiceContext } from '../../context';
import { routeHooks } from '../../../http';
import { announceNextPage } from '../../lib/paging';
import { authPlugin } from '../auth';
import { exportAudit, listAudit } from './audit';
import { setCreatorSuspended, setSkillHidden } from './decisions';
import { requireOperator } from './operators';
import { ownReports } from './own-reports';
import { dismissReport, postReport, reportQueue } from './reports';
import { standingOf } from './standing';

const r = REGISTRY_ROUTES;

/** Reports from any signed-in account; the queue, decisions and audit log for the operators alone (403 for others). */
export function moderationRoutes(ctx: ServiceContext) {
  return new Elysia({ name: 'moderation-routes' })
    .use(authPlugin(ctx))
    .route(
      r.postReport.method,
      r.postReport.path,
      async ({ principal, body, set }) => {
        const report = await postReport(ctx, principal.userId, body);
        set.status = 201;
        return report;
      },
      routeHooks(r.postReport),
    )
    .route(
      r.ownReports.method,
      r.ownReports.path,
      async ({ principal, query, set, request }) => {
        const { items, nextCursor } = await ownReports(ctx, principal.userId, query);
        announceNextPage(set.headers, request.url, nextCursor);
        return items;
      },
      routeHooks(r.ownReports),
    )
    .route(
      r.moderationStanding.method,
      r.moderationStanding.path,
      ({ principal }) => standingOf(ctx, principal),
      routeHooks(r.moderationStanding),
    )
    .route(
      r.reportQueue.method,
      r.reportQueue.path,
      async ({ principal, query, set, request }) => {
        requireOperator(ctx, principal);
        const { items, nextCursor } = await reportQueue(ctx, query);
        announceNextPage(set.headers, request.url, nextCursor);
        return items;
      },
      routeHooks(r.reportQueue),
    )
    .route(
      r.dismissReport.method,
      r.dismissReport.path,
      ({ principal, params, body }) => dismissReport(ctx, requireOperator(ctx, principal), params.id, body.reason),
      routeHooks(r.dismissReport),
    )
    .route(
      r.hideSkill.method,
      r.hideSkill.path,
      ({ principal, params, body }) => setSkillHidden(ctx, requireOperator(ctx, principal), params.slug, true, body),
      routeHooks(r.hideSkill),
    )
    .route(
      r.restoreSkill.method,
      r.restoreSkill.path,
      ({ principal, params, body }) => setSkillHidden(ctx, requireOperator(ctx, principal), params.slug, false, body),
      routeHooks(r.restoreSkill),
    )
    .route(
      r.suspendCreator.method,
      r.suspendCreator.path,
      ({ principal, params, body }) => setCreatorSuspended(ctx, requireOperator(ctx, principal), params.address, true, body),
      routeHooks(r.suspendCreator),
    )
    .route(
      r.restoreCreator.method,
      r.restoreCreator.path,
      ({ principal, params, body }) => setCreatorSuspended(ctx, requireOperator(ctx, principal), params.address, false, body),
      routeHooks(r.restoreCreator),
    )
    .route(
      r.auditLog.method,
      r.auditLog.path,
      async ({ principal, query, set, request }) => {
        requireOperator(ctx, principal);
        const { entries, nextCursor } = await listAudit(ctx, query);
        announceNextPage(set.headers, request.url, nextCursor);
        return entries;
      },
      routeHooks(r.auditLog),
    )
    .route(
      r.auditExport.method,
      r.auditExport.path,
      async ({ principal, query, set }) => {
        requireOperator(ctx, principal);
        const format = query.format ?? 'csv';
        set.headers['content-type'] = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
        set.headers['content-disposition'] = `attachment; filename="moderation-audit.${format}"`;
        return exportAudit(ctx, format);
      },
      routeHooks(r.auditExport),
    );
}
