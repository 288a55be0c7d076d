/**
 * The server kit shared by the registry and the facilitator: request context (ids, access log,
 * body limit, JSON guard), one error shape and its mapping, the health route, and listening.
 */
export { AppError, ERROR_STATUS, type ErrorBody, type ErrorCode } from './errors';
export { requestContext, requestIdOf, REQUEST_ID_HEADER } from './request-context';
export { errorHandler, RETRY_AFTER_SECONDS } from './error-handler';
export { healthRoutes } from './health';
export { LISTENER_BODY_LIMIT, LISTENER_OPTIONS, listen, serverBase } from './server';
