export { createRegistry, systemClock, type Clock, type Registry, type RegistryDeps } from './app';
export { startRegistry, type RunningRegistry } from './server';
export { AppError, type ErrorBody, type ErrorCode } from '../http';
export type { ServiceContext } from './context';
