/**
 * The free trial and volume prices of a skill in its editor: a trial of so many calls per wallet a
 * period, or none; volume steps (after so many paid calls, this price; rows added and removed) in a
 * period, or none. Sent with the editor's PATCH only when changed (an edit is kept over the
 * module's on re-registration, and the skill server follows it within seconds).
 */
import { useState } from 'preact/hooks';
import type { SkillView as Skill, TrialTerms, VolumeTiers } from 'skill-market/registry';
import { Field } from '../../components/field';

type Period = TrialTerms['period'];
const PERIODS: Period[] = ['day', 'week', 'month'];
const PRICE = /^\$?[0-9]+(\.[0-9]{1,6})?$/;

interface Step {
  after: string;
  price: string;
}

/** What the editor sends of the plans (only what changed), or why it cannot. */
export interface PlansEdit {
  body: { trial?: TrialTerms | null; tiers?: VolumeTiers | null };
  problem: string | undefined;
}

function PeriodSelect({ id, label, value, onValue }: { id: string; label: string; value: Period; onValue: (p: Period) => void }) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value as Period)}>
        {PERIODS.map((p) => (
          <option key={p} value={p}>
            {p}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The fields, and the edit they make of `skill`'s plans. */
export function usePlansEditor(skill: Skill, price: string): { fields: preact.JSX.Element; edit: PlansEdit } {
  const [trialOn, setTrialOn] = useState(skill.trial !== null);
  const [calls, setCalls] = useState(String(skill.trial?.calls ?? 3));
  const [trialPeriod, setTrialPeriod] = useState<Period>(skill.trial?.period ?? 'day');
  const [tiersOn, setTiersOn] = useState(skill.tiers !== null);
  const [tierPeriod, setTierPeriod] = useState<Period>(skill.tiers?.period ?? 'month');
  const [steps, setSteps] = useState<Step[]>(
    skill.tiers?.steps.map((s) => ({ after: String(s.after), price: s.price.replace(/^\$/, '') })) ?? [{ after: '1000', price: '' }],
  );

  const callsError =
    trialOn && !(/^[0-9]{1,4}$/.test(calls) && Number(calls) >= 1 && Number(calls) <= 1000) ? 'A whole number from 1 to 1000' : undefined;
  const stepErrors = steps.map((step, i) => {
    const after = Number(step.after);
    const before = i === 0 ? 0 : Number(steps[i - 1]!.after);
    const afterError =
      !/^[0-9]{1,10}$/.test(step.after) || after < 1
        ? 'A whole number of calls'
        : after <= before
          ? 'More calls than the step before'
          : undefined;
    const mine = Number(step.price.replace(/^\$/, ''));
    const above = i === 0 ? Number(price.replace(/^\$/, '')) : Number(steps[i - 1]!.price.replace(/^\$/, ''));
    const priceError = !PRICE.test(step.price)
      ? 'A price of up to 6 decimals, e.g. 0.0008'
      : Number.isFinite(above) && mine >= above
        ? 'Lower than the price before it'
        : undefined;
    return { afterError, priceError };
  });
  const stepsWrong = tiersOn && stepErrors.some((e) => e.afterError || e.priceError);

  const trial: TrialTerms | null = trialOn ? { calls: Number(calls), period: trialPeriod } : null;
  const tiers: VolumeTiers | null = tiersOn
    ? { period: tierPeriod, steps: steps.map((s) => ({ after: Number(s.after), price: `$${s.price.replace(/^\$/, '')}` })) }
    : null;
  const listedTiers = skill.tiers && {
    period: skill.tiers.period,
    steps: skill.tiers.steps.map((s) => ({ after: s.after, price: s.price })),
  };
  const body: PlansEdit['body'] = {
    ...(JSON.stringify(trial) !== JSON.stringify(skill.trial && { calls: skill.trial.calls, period: skill.trial.period }) ? { trial } : {}),
    ...(JSON.stringify(tiers) !== JSON.stringify(listedTiers) ? { tiers } : {}),
  };
  const problem = callsError ? 'Fix the free trial marked above.' : stepsWrong ? 'Fix the volume prices marked above.' : undefined;

  const setStep = (i: number, change: Partial<Step>) => setSteps(steps.map((s, j) => (j === i ? { ...s, ...change } : s)));
  const fields = (
    <>
      <fieldset class="field">
        <legend>Free trial</legend>
        <div class="field-check">
          <input type="checkbox" id="edit-trial-on" checked={trialOn} onChange={(e) => setTrialOn(e.currentTarget.checked)} />
          <label for="edit-trial-on">Free calls for each new wallet</label>
        </div>
        {trialOn && (
          <div class="plan-row">
            <Field id="edit-trial-calls" label="Free calls" inputMode="numeric" value={calls} onValue={setCalls} error={callsError} />
            <PeriodSelect id="edit-trial-period" label="Per wallet each" value={trialPeriod} onValue={setTrialPeriod} />
          </div>
        )}
      </fieldset>
      <fieldset class="field">
        <legend>Volume prices</legend>
        <div class="field-check">
          <input type="checkbox" id="edit-tiers-on" checked={tiersOn} onChange={(e) => setTiersOn(e.currentTarget.checked)} />
          <label for="edit-tiers-on">Lower prices for a payer's many calls</label>
        </div>
        {tiersOn && (
          <>
            <PeriodSelect id="edit-tiers-period" label="Paid calls counted per" value={tierPeriod} onValue={setTierPeriod} />
            {steps.map((step, i) => (
              <div class="plan-row" key={i}>
                <Field
                  id={`edit-step-${i}-after`}
                  label={`Step ${i + 1}: after paid calls`}
                  inputMode="numeric"
                  value={step.after}
                  onValue={(after) => setStep(i, { after })}
                  error={stepErrors[i]!.afterError}
                />
                <Field
                  id={`edit-step-${i}-price`}
                  label={`Step ${i + 1}: price (USDC)`}
                  inputMode="decimal"
                  value={step.price}
                  onValue={(price) => setStep(i, { price })}
                  error={stepErrors[i]!.priceError}
                />
                {steps.length > 1 && (
                  <button
                    type="button"
                    class="button"
                    aria-label={`Remove step ${i + 1}`}
                    onClick={() => setSteps(steps.filter((_, j) => j !== i))}
                  >
                    Remove
                  </button>
                )}
              </div>
            ))}
            {steps.length < 10 && (
              <button type="button" class="button" onClick={() => setSteps([...steps, { after: '', price: '' }])}>
                Add a step
              </button>
            )}
          </>
        )}
      </fieldset>
    </>
  );
  return { fields, edit: { body, problem } };
}
