export { createRegistry, systemClock, type Clock } from './app';
export { startRegistry, type RunningRegistry } from './server';
export { createRegistryMetrics, type RegistryMetrics } from './metrics';
export { AppError } from '../http';
export type { ServiceContext } from './context';
