/**
 * The server kit shared by the registry and the facilitator: security headers, request context
 * (ids, access log, body limit, JSON guard), one error shape and its mapping, the health route, declaring a route of the registry's route table, and listening.
 */
export { AppError } from './errors';
export { healthRoutes } from './health';
export { routeHooks } from './route';
export { LISTENER_OPTIONS, listen, serverBase } from './server';
export type { Answered } from './request-context';
