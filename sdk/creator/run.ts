/**
 * Runs one handler under its deadline. A handler cannot be killed, so past the deadline its
 * signal is aborted and its eventual result ignored; the caller answers 504 and charges nothing.
 */
import { validateAgainst, type ValueProblem } from '../json-schema/index';
import type { Skill, SkillContext } from './skill';

/** How a handler run ended. */
export type RunOutcome =
  | { type: 'ok'; result: unknown }
  | { type: 'error'; error: unknown }
  | { type: 'timeout'; timeoutMs: number }
  | { type: 'invalid-output'; problems: ValueProblem[] };

/**
 * Calls `skill.handler(input, context)` with `timeoutMs`; checks the result against the
 * outputSchema and that it is JSON-serializable (`undefined` becomes `null`).
 */
export async function runHandler(
  skill: Skill,
  input: unknown,
  context: Omit<SkillContext, 'signal'>,
  timeoutMs: number,
): Promise<RunOutcome> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<RunOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new DOMException(`Skill timed out after ${timeoutMs} ms`, 'TimeoutError'));
      resolve({ type: 'timeout', timeoutMs });
    }, timeoutMs);
  });
  const work = (async (): Promise<RunOutcome> => {
    try {
      const value = await skill.handler(input, { ...context, signal: controller.signal });
      return { type: 'ok', result: value === undefined ? null : value };
    } catch (error) {
      return { type: 'error', error };
    }
  })();
  try {
    const outcome = await Promise.race([work, deadline]);
    if (outcome.type !== 'ok') return outcome;
    return checkResult(skill, outcome.result);
  } finally {
    clearTimeout(timer);
  }
}

function checkResult(skill: Skill, result: unknown): RunOutcome {
  let roundTripped: unknown;
  try {
    const text = JSON.stringify(result);
    if (text === undefined) throw new TypeError('the result is not JSON-serializable');
    roundTripped = JSON.parse(text);
  } catch (error) {
    return { type: 'error', error: new TypeError(`Skill result is not JSON-serializable: ${(error as Error).message}`) };
  }
  if (skill.outputSchema) {
    const problems = validateAgainst(skill.outputSchema, roundTripped);
    if (problems.length > 0) return { type: 'invalid-output', problems };
  }
  return { type: 'ok', result: roundTripped };
}
