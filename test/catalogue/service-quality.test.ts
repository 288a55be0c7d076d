/**
 * The service quality a skill server's health probes make: time-weighted uptime over about a week,
 * the share of the recent probes answered, the recent response time, and the factor they give the
 * buyers `sort=popular` ranks by.
 */
import { describe, expect, it } from 'bun:test';
import {
  observe,
  type ProbeRecord,
  serviceQuality,
  UNKNOWN_QUALITY,
  UPTIME_WINDOW_MS,
} from '../../src/registry/modules/skill-health/quality';

const never: ProbeRecord = { uptimePpm: null, recentSuccessPpm: null, latencyAvgMs: null, lastCheckedAt: null };
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 29) + minutes * 60_000);

/** The record after probes every `minutes`, answering per `up` (latency `ms` when answered). */
function probes(outcomes: readonly boolean[], minutes = 5, ms = 100, from: ProbeRecord = never, start = 0): ProbeRecord {
  let record = from;
  outcomes.forEach((up, i) => {
    record = observe(record, up ? { up: true, latencyMs: ms } : { up: false }, at(start + i * minutes));
  });
  return record;
}

describe('service quality', () => {
  it('is unknown before a probe, and the first probe sets every share', () => {
    expect(serviceQuality(never)).toBe(UNKNOWN_QUALITY);
    expect(observe(never, { up: true, latencyMs: 120 }, at(0))).toEqual({
      uptimePpm: 1_000_000,
      recentSuccessPpm: 1_000_000,
      latencyAvgMs: 120,
      lastCheckedAt: at(0),
    });
    expect(observe(never, { up: false }, at(0))).toMatchObject({ uptimePpm: 0, recentSuccessPpm: 0, latencyAvgMs: null });
    expect(serviceQuality(probes([true]))).toBe(1000);
    expect(serviceQuality(probes([false]))).toBe(0);
  });

  it('weighs an interval into the uptime by its length: an hour down in a week of probes costs about 1/168', () => {
    const week = probes(
      Array.from({ length: 168 }, () => true),
      60,
    );
    const down = observe(week, { up: false }, at(168 * 60));
    const share = 1 - Math.exp(-3_600_000 / UPTIME_WINDOW_MS);
    expect(down.uptimePpm).toBe(Math.round(1_000_000 - 1_000_000 * share));
    expect(down.uptimePpm! / 1e6).toBeCloseTo(1 - 1 / 168, 4);
    // The recent share moves by 1/8 per probe whatever the interval.
    expect(down.recentSuccessPpm).toBe(875_000);
    // A server down most of the week keeps a low uptime after one good hour.
    const mostlyDown = probes(
      Array.from({ length: 167 }, (_, i) => i === 166),
      60,
    );
    expect(mostlyDown.uptimePpm! / 1e6).toBeLessThan(0.05);
  });

  it('takes the lower of uptime and recent success: a good week does not rescue a server failing now', () => {
    const goodWeek = probes(
      Array.from({ length: 168 }, () => true),
      60,
    );
    const failingNow = probes([false, false, false, false], 5, 100, goodWeek, 168 * 60);
    expect(failingNow.uptimePpm! / 1e6).toBeGreaterThan(0.99);
    expect(failingNow.recentSuccessPpm).toBe(Math.round(1e6 * (7 / 8) ** 4));
    expect(serviceQuality(failingNow)).toBe(Math.round(1000 * (7 / 8) ** 4));
  });

  it('keeps the full factor up to 500 ms, then lowers it linearly to a half at 5 s and beyond', () => {
    const answering = (ms: number) => probes([true], 5, ms);
    expect(serviceQuality(answering(500))).toBe(1000);
    expect(serviceQuality(answering(2750))).toBe(750);
    expect(serviceQuality(answering(5000))).toBe(500);
    expect(serviceQuality(answering(60_000))).toBe(500);
    // The response time moves by 1/8 per answered probe and holds while the server does not answer.
    const slower = observe(answering(100), { up: true, latencyMs: 900 }, at(5));
    expect(slower.latencyAvgMs).toBe(200);
    expect(observe(slower, { up: false }, at(10)).latencyAvgMs).toBe(200);
  });
});
