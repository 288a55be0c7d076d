/**
 * Skill health: background probes of skill servers (`GET <server>/health`) and the status,
 * latency and last success that listings show. Not the registry's own `/health` route (see
 * `modules/health`).
 */
export { createHealthProber, type HealthProber, type HealthProberDeps } from './prober';
export { healthCondition } from './filters';
export { currentServiceQuality } from './store';
export { serverHealthSummary } from './summary';
