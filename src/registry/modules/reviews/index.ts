/**
 * Reviews by verified buyers, in two dialects over one stored 0–100 scale (scale.ts): stars for
 * our clients, 0–100 for the other SDK.
 */
export { reviewRoutes } from './routes';
export { averageStars } from './scale';
