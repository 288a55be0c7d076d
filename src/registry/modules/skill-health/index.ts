/**
 * Skill health: background probes of skill servers (`GET <server>/health`) and the status,
 * latency and last success that listings show. Not the registry's own `/health` route (see
 * `modules/health`).
 */
export { createHealthProber, type HealthProber, type HealthProberDeps, type ProbeRound } from './prober';
export { healthCondition } from './filters';
export { isPublicAddress, checkHost, resolveWithDns, type Resolve } from './address-guard';
export { probeServer, type ProbeOutcome } from './probe';
