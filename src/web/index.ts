export { pageRoutes, webRoutes } from './server';
