/**
 * How well a skill server serves, from its health probes: the uptime of the last week, the share
 * of the recent probes it answered, the response time of the recent ones, and the service quality
 * they make (per mille), which weighs the buyers `sort=popular` ranks by. Buyers are bought with
 * wallets and payments; a server that is down, flapping or slow cannot buy this factor.
 */

/** What the last probes left: parts per million for the shares, milliseconds for the response time; null before the first. */
export interface ProbeRecord {
  uptimePpm: number | null;
  recentSuccessPpm: number | null;
  latencyAvgMs: number | null;
  /** When the server was last probed (with an answer or not). */
  lastCheckedAt: Date | null;
}

/** A probe's outcome as the quality counts it: answered (with its response time) or not. */
export type Observation = { up: true; latencyMs: number } | { up: false };

const PPM = 1_000_000;
/** The window the uptime is over: a probe's interval weighs in over about a week. */
export const UPTIME_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** Weight of the newest probe in the recent success share and the response time. */
const RECENT_WEIGHT = 1 / 8;
/** Response times up to this do not lower the quality; from here it falls linearly… */
const FAST_MS = 500;
/** …to half at this response time and beyond. */
const SLOW_MS = 5000;
/** The quality of a server not probed yet. */
export const UNKNOWN_QUALITY = 500;

const clampPpm = (v: number) => Math.min(PPM, Math.max(0, Math.round(v)));

/**
 * The record after one more probe at `now`. The uptime is time-weighted: the time since the last
 * probe counts as up when this probe answered, down when it did not, and weighs in with
 * 1 − e^(−interval / week); the recent success share and the response time move by 1/8 per probe.
 */
export function observe(previous: ProbeRecord, observation: Observation, now: Date): ProbeRecord {
  const value = observation.up ? PPM : 0;
  const latency = observation.up ? observation.latencyMs : null;
  if (previous.uptimePpm === null || previous.recentSuccessPpm === null || previous.lastCheckedAt === null) {
    return { uptimePpm: value, recentSuccessPpm: value, latencyAvgMs: latency === null ? null : Math.round(latency), lastCheckedAt: now };
  }
  const interval = Math.max(0, now.getTime() - previous.lastCheckedAt.getTime());
  const weight = 1 - Math.exp(-interval / UPTIME_WINDOW_MS);
  const averageLatency =
    latency === null
      ? previous.latencyAvgMs
      : previous.latencyAvgMs === null
        ? Math.round(latency)
        : Math.round(previous.latencyAvgMs + (latency - previous.latencyAvgMs) * RECENT_WEIGHT);
  return {
    uptimePpm: clampPpm(previous.uptimePpm + (value - previous.uptimePpm) * weight),
    recentSuccessPpm: clampPpm(previous.recentSuccessPpm + (value - previous.recentSuccessPpm) * RECENT_WEIGHT),
    latencyAvgMs: averageLatency,
    lastCheckedAt: now,
  };
}

/**
 * The service quality per mille: the lower of uptime and recent success (a server flapping now is
 * not rescued by a good week, nor a good hour by a bad week), times the response-time factor (1 up
 * to 500 ms, falling linearly to 1/2 at 5 s and beyond). {@link UNKNOWN_QUALITY} before any probe.
 */
export function serviceQuality(record: ProbeRecord): number {
  if (record.uptimePpm === null || record.recentSuccessPpm === null) return UNKNOWN_QUALITY;
  const answered = Math.min(record.uptimePpm, record.recentSuccessPpm) / PPM;
  const latency = record.latencyAvgMs ?? FAST_MS;
  const speed = latency <= FAST_MS ? 1 : Math.max(0.5, 1 - (0.5 * (latency - FAST_MS)) / (SLOW_MS - FAST_MS));
  return Math.round(1000 * answered * speed);
}
