/**
 * The calendar periods of trials and volume prices, in UTC: a day ends at midnight, a week on
 * Monday at midnight, a month on the first at midnight.
 */

/** A counting period: `day`, `week` (Monday to Sunday) or `month`, in UTC. */
export type Period = 'day' | 'week' | 'month';

/** The periods a skill may count in. */
export const PERIODS: readonly Period[] = ['day', 'week', 'month'];

/** When the period holding `at` (ms) ends, ms: the start of the next one. */
export function periodEnd(period: Period, at: number): number {
  const d = new Date(at);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  if (period === 'day') return Date.UTC(y, m, day + 1);
  if (period === 'month') return Date.UTC(y, m + 1, 1);
  // getUTCDay: Sunday 0 … Saturday 6; days until the next Monday.
  const untilMonday = (8 - d.getUTCDay()) % 7 || 7;
  return Date.UTC(y, m, day + untilMonday);
}
