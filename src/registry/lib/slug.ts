import { randomBytes } from 'node:crypto';

/** "Weather Forecast!" → "weather-forecast"; never empty. */
export function slugify(text: string, maxLength = 48): string {
  const slug = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/, '');
  return slug || 'item';
}

/** The slug with a short random suffix, for when the plain one is taken. */
function suffixed(slug: string): string {
  return `${slug}-${randomBytes(3).toString('hex')}`;
}

/** Runs `insert(slug)` with the plain slug, then with suffixes while the slug is taken. */
export async function withUniqueSlug<T>(base: string, insert: (slug: string) => Promise<T | undefined>): Promise<T> {
  let slug = base;
  for (let attempt = 0; attempt < 8; attempt++) {
    const result = await insert(slug);
    if (result !== undefined) return result;
    slug = suffixed(base);
  }
  throw new Error(`could not find a free slug for "${base}"`);
}
