export { pageRoutes, webRoutes, PAGE_PATHS } from './server';
export { pageConfig, type PageConfig } from './config';
