/**
 * Review scores in two dialects over one stored scale. Stored: a whole number 0–100 (the scale the
 * other SDK sends, `feedback(slug, 85)`, and reads back). Our clients speak stars, 1–5: a star is
 * 20 points (4 stars are stored as 80), and a stored score reads as the nearest whole star, at
 * least 1 (85 reads as 4, 90 as 5, 5 as 1). A listing's `rating` is the exact average in stars
 * (stored average / 20). Which dialect a request speaks: a request whose Accept header names
 * `application/json` (every client of ours: the SDK, `market`, the MCP server, the pages) speaks
 * stars; one without it (no Accept, or `*` / `*`, as a plain `fetch` sends: the other SDK) the
 * 0–100 scale.
 */
import { AppError } from '../../../http';

export type ReviewScale = 'stars' | 'points';

/** Points per star. */
const STAR = 20;

/** The dialect of a request, from its Accept header. */
export function reviewScaleOf(accept: string | null | undefined): ReviewScale {
  const ranges = (accept ?? '').split(',').map((range) => range.split(';')[0]!.trim().toLowerCase());
  return ranges.includes('application/json') ? 'stars' : 'points';
}

/** The stored score (0–100) of a score in `scale`; 400 when it is outside that scale. */
export function storedScore(score: number, scale: ReviewScale): number {
  if (scale === 'points') {
    if (!Number.isInteger(score) || score < 0 || score > 100) throw invalid('a whole number from 0 to 100');
    return score;
  }
  if (!Number.isInteger(score) || score < 1 || score > 5) throw invalid('a whole number of stars from 1 to 5');
  return score * STAR;
}

/** A stored score (0–100) as `scale` reads it. */
export function shownScore(stored: number, scale: ReviewScale): number {
  return scale === 'points' ? stored : starsOf(stored);
}

/** The nearest whole star of a stored score, 1 to 5. */
export function starsOf(stored: number): number {
  return Math.min(5, Math.max(1, Math.round(stored / STAR)));
}

/** A listing's average rating in stars (0–5, exact) from the stored sum and count; null without reviews. */
export function averageStars(sum: number, count: number): number | null {
  return count > 0 ? sum / count / STAR : null;
}

const invalid = (form: string) => new AppError('VALIDATION', `Invalid request: field "score": must be ${form}`);
