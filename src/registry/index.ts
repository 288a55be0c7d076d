export { createRegistry, type RegistryDeps, systemClock, type Clock } from './app';
export { startRegistry, type RunningRegistry } from './server';
export { createRegistryMetrics } from './metrics';
export { AppError } from '../http';
export type { ServiceContext } from './context';
