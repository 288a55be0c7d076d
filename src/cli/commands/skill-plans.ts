/**
 * The arguments of `market skill trial` and `market skill tiers`, and how a listing's free trial and
 * volume prices read: `3/day` or `off`; `1000:$0.0008,5000:$0.0005` (with `--period`) or `off`.
 */
import type { SkillView, TrialTerms, VolumeTiers } from 'skill-market/registry';
import { UsageError } from '../errors';

const PERIODS = ['day', 'week', 'month'] as const;
type Period = (typeof PERIODS)[number];

const isPeriod = (value: string): value is Period => (PERIODS as readonly string[]).includes(value);

/** `<calls>/<period>` as a trial, `off` as none (null). */
export function parseTrial(text: string): TrialTerms | null {
  if (text === 'off') return null;
  const match = /^(\d{1,4})\/(\w+)$/.exec(text);
  if (!match || !isPeriod(match[2]!))
    throw new UsageError(`trial "${text}" must be <calls>/<period> (period day, week or month), e.g. 3/day, or off`);
  return { calls: Number(match[1]), period: match[2] };
}

/** `<after>:<price>,…` as volume prices counted per `period` (default month), `off` as none (null). */
export function parseTiers(text: string, period = 'month'): VolumeTiers | null {
  if (text === 'off') return null;
  if (!isPeriod(period)) throw new UsageError(`--period must be day, week or month, got "${period}"`);
  const steps = text.split(',').map((part) => {
    const match = /^\s*(\d{1,10}):\s*(\$?[0-9.]+)\s*$/.exec(part);
    if (!match) throw new UsageError(`volume price "${part}" must be <after>:<price>, e.g. 1000:$0.0008`);
    return { after: Number(match[1]), price: match[2]!.startsWith('$') ? match[2]! : `$${match[2]}` };
  });
  return { period, steps };
}

/** A listing's trial, as people read it. */
export const trialText = (trial: SkillView['trial'] | undefined) =>
  trial ? `${trial.calls} free call${trial.calls === 1 ? '' : 's'} per wallet a ${trial.period}` : 'no free trial';

/** A listing's volume prices, as people read them. */
export const tiersText = (tiers: SkillView['tiers'] | undefined) =>
  tiers
    ? `volume prices ${tiers.steps.map((s) => `${s.price} after ${s.after} calls`).join(', ')} (counted per ${tiers.period})`
    : 'no volume prices';

/** Whether the trial and tiers a skill server's `/health` tells are the listing's. */
export function samePlans(
  told: unknown,
  listing: { trial?: SkillView['trial'] | undefined; tiers?: SkillView['tiers'] | undefined },
): boolean {
  const want = {
    trial: listing.trial ? { calls: listing.trial.calls, period: listing.trial.period } : null,
    tiers: listing.tiers
      ? { period: listing.tiers.period, steps: listing.tiers.steps.map(({ after, price }) => ({ after, price })) }
      : null,
  };
  return JSON.stringify(told) === JSON.stringify(want);
}
