/**
 * The registry's route table: every route once, with its method, path, schemas, answer and who
 * may call it. The registry declares its routes from it; the SDK's client calls them by it.
 */
import { Health } from '../health';
import { analyticsRoutes } from './analytics';
import { authRoutes, walletRoutes, webhookRoutes } from './account';
import { creatorRoutes, discoveryRoutes, groupRoutes, reviewRoutes, skillRoutes } from './catalogue';
import { moderationRoutes } from './moderation';
import type { Route } from './route';

const systemRoutes = {
  health: {
    method: 'GET',
    path: '/health',
    access: 'public',
    response: { 200: Health as typeof Health, 503: Health as typeof Health },
    tag: 'System',
    summary: 'Liveness and database reachability',
  },
} satisfies Record<string, Route>;

/**
 * Every route of the registry's HTTP API by name: method, path (parameters as `:name`), the
 * TypeBox schemas of its path parameters, query, body and answer, who may call it
 * ({@link RouteAccess}), and its one-line summary. Send any of them with `RegistryClient.call`.
 *
 * @example
 * import { REGISTRY_ROUTES, RegistryClient } from 'skill-market/registry';
 *
 * REGISTRY_ROUTES.skill.path; // '/skills/:slug'
 * REGISTRY_ROUTES.registerSkill.access; // 'creator': a session or a creator key (sk_…)
 * const registry = new RegistryClient({ apiUrl: 'https://registry.example' });
 * const balance = await registry.call(REGISTRY_ROUTES.balance, { params: { address: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' } });
 */
export const REGISTRY_ROUTES: typeof systemRoutes &
  typeof authRoutes &
  typeof creatorRoutes &
  typeof walletRoutes &
  typeof groupRoutes &
  typeof skillRoutes &
  typeof discoveryRoutes &
  typeof analyticsRoutes &
  typeof reviewRoutes &
  typeof webhookRoutes &
  typeof moderationRoutes = {
  ...systemRoutes,
  ...authRoutes,
  ...creatorRoutes,
  ...walletRoutes,
  ...groupRoutes,
  ...skillRoutes,
  ...discoveryRoutes,
  ...analyticsRoutes,
  ...reviewRoutes,
  ...webhookRoutes,
  ...moderationRoutes,
};

/** The type of {@link REGISTRY_ROUTES}: each route's name and its exact {@link Route}. */
export type RegistryRoutes = typeof REGISTRY_ROUTES;

export {
  needsCredential,
  type CredentialAccess,
  type Route,
  type RouteAccess,
  type RouteAnswer,
  type RouteInput,
  type RouteMethod,
  type RouteResponse,
} from './route';
