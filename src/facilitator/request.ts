/**
 * The verify/settle request envelope as every scheme receives it: a body that is not a
 * facilitator request at all answers 400 (as the reference does).
 */

/** A body that is not a facilitator request at all (answered 400, as the reference does). */
export class FacilitatorRequestError extends Error {
  override readonly name = 'FacilitatorRequestError';
}
