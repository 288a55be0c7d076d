/**
 * The marketplace: full-text search as you type, group and price filters, sorts, and paging by
 * the registry's cursor (X-Next-Cursor). The filters live in the URL, so a search can be shared
 * and the back button works.
 */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { SkillCard, SkillCardSkeletons } from '../components/skill-card';
import { Empty, ErrorBox } from '../components/states';
import type { GroupView as Group, SearchQuery, Skill } from 'skill-market/registry';
import { asApiError, registry, type ApiError } from '../lib/api';
import { location, navigate } from '../lib/router';

const PAGE_SIZE = 24;
const SORTS = [
  ['relevance', 'Best match'],
  ['popular', 'Most buyers'],
  ['newest', 'Newest'],
  ['price', 'Lowest price'],
  ['revenue', 'Top earning'],
  ['rating', 'Best rated'],
] as const;
const FILTERS = ['q', 'group', 'minPrice', 'maxPrice', 'sort'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

function readFilters(query: URLSearchParams): Filters {
  return Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ''])) as Filters;
}

function queryOf(filters: Filters, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...filters, ...extra })) if (v) params.set(k, v);
  // Relevance ranks a search; without words to rank by, the registry's default (newest) applies.
  if (!filters.q && params.get('sort') === 'relevance') params.delete('sort');
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The registry's search query for these filters (the URL's, which may hold anything: the registry checks it). */
function searchOf(filters: Filters, cursor?: string): SearchQuery {
  const query: Record<string, string | number> = { limit: PAGE_SIZE };
  for (const [k, v] of Object.entries(filters)) if (v) query[k] = v;
  if (!filters.q && query.sort === 'relevance') delete query.sort;
  if (cursor) query.cursor = cursor;
  return query as SearchQuery;
}

type Listing =
  | { state: 'loading' }
  | { state: 'error'; error: ApiError }
  | { state: 'ready'; skills: Skill[]; next: string | null; more: 'idle' | 'loading' | ApiError };

export function MarketplacePage() {
  const filters = readFilters(location.value.query);
  const [text, setText] = useState(filters.q);
  const [listing, setListing] = useState<Listing>({ state: 'loading' });
  const [groups, setGroups] = useState<Group[] | undefined>();
  const [attempt, setAttempt] = useState(0);
  const key = queryOf(filters);

  const setFilter = (name: keyof Filters, value: string) => navigate(`/${queryOf({ ...filters, [name]: value })}`, { replace: true });

  // Search as you type, once the typing pauses.
  const typing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const onType = (value: string) => {
    setText(value);
    clearTimeout(typing.current);
    typing.current = setTimeout(() => setFilter('q', value.trim()), 250);
  };
  // A pause that ends after the visitor has left (opened a skill) must not bring them back.
  useEffect(() => () => clearTimeout(typing.current), []);

  useEffect(() => {
    registry.groups().then(setGroups, () => setGroups([]));
  }, []);

  // A layout effect starts the request right after the first render instead of after the first
  // paint: the cards are what the visitor came for.
  useLayoutEffect(() => {
    const controller = new AbortController();
    setListing({ state: 'loading' });
    registry.search(searchOf(filters), controller.signal).then(
      ({ items, nextCursor }) =>
        controller.signal.aborted || setListing({ state: 'ready', skills: items, next: nextCursor ?? null, more: 'idle' }),
      (error) => controller.signal.aborted || setListing({ state: 'error', error: asApiError(error) }),
    );
    return () => controller.abort();
  }, [key, attempt]);

  const loadMore = async () => {
    if (listing.state !== 'ready' || !listing.next) return;
    setListing({ ...listing, more: 'loading' });
    try {
      const { items, nextCursor } = await registry.search(searchOf(filters, listing.next));
      setListing({ state: 'ready', skills: [...listing.skills, ...items], next: nextCursor ?? null, more: 'idle' });
    } catch (error) {
      setListing({ ...listing, more: asApiError(error) });
    }
  };

  return (
    <section>
      <div class="hero">
        <h1 tabIndex={-1}>Find a skill, pay per call</h1>
        <p class="muted">HTTP skills priced in USDC. Call them from code, the command line or right here in the browser.</p>
      </div>
      {/* biome-ignore lint/a11y/useSemanticElements: role=search on the form is the landmark; <search> is not in the JSX types */}
      <form
        class="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter('q', text.trim());
        }}
      >
        <div class="field field-search">
          <label for="search">Search skills</label>
          <input
            id="search"
            type="search"
            value={text}
            placeholder="e.g. translate, weather, summarize"
            autocomplete="off"
            onInput={(e) => onType(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for="group">Group</label>
          <select id="group" value={filters.group} onChange={(e) => setFilter('group', e.currentTarget.value)}>
            <option value="">All groups</option>
            {(groups ?? []).map((g) => (
              <option key={g.id} value={g.slug}>
                {g.icon ? `${g.icon} ` : ''}
                {g.name}
              </option>
            ))}
          </select>
        </div>
        <div class="field field-price">
          <label for="min-price">Min price (USDC)</label>
          <input
            id="min-price"
            inputMode="decimal"
            value={filters.minPrice}
            placeholder="0"
            onChange={(e) => setFilter('minPrice', e.currentTarget.value.trim())}
          />
        </div>
        <div class="field field-price">
          <label for="max-price">Max price (USDC)</label>
          <input
            id="max-price"
            inputMode="decimal"
            value={filters.maxPrice}
            placeholder="any"
            onChange={(e) => setFilter('maxPrice', e.currentTarget.value.trim())}
          />
        </div>
        <div class="field">
          <label for="sort">Sort by</label>
          <select
            id="sort"
            value={filters.sort || (filters.q ? 'relevance' : 'newest')}
            onChange={(e) => setFilter('sort', e.currentTarget.value)}
          >
            {SORTS.map(([value, label]) => (
              <option key={value} value={value} disabled={value === 'relevance' && !filters.q}>
                {label}
              </option>
            ))}
          </select>
        </div>
      </form>
      <div aria-live="polite" aria-busy={listing.state === 'loading'}>
        {listing.state === 'loading' && (
          <>
            <p class="muted small result-count" aria-hidden="true" />
            {/* A screenful of placeholders: what follows (the footer) stays out of view until the cards are in. */}
            <SkillCardSkeletons n={12} />
          </>
        )}
        {listing.state === 'error' && (
          <ErrorBox error={listing.error} title="Could not load skills" retry={() => setAttempt((n) => n + 1)} />
        )}
        {listing.state === 'ready' &&
          (listing.skills.length === 0 ? (
            <Empty title={key ? 'No skills match' : 'No skills yet'}>
              {key ? 'Try other words or fewer filters.' : 'Creators publish skills with market serve; they appear here.'}
            </Empty>
          ) : (
            <>
              <p class="muted small result-count">
                Showing {listing.skills.length} skill{listing.skills.length === 1 ? '' : 's'}
                {listing.next ? ' (more below)' : ''}
              </p>
              <ul class="skill-grid">
                {listing.skills.map((skill) => (
                  <SkillCard key={skill.id} skill={skill} />
                ))}
              </ul>
              {listing.more !== 'idle' && listing.more !== 'loading' && (
                <ErrorBox error={listing.more} title="Could not load more skills" />
              )}
              {listing.next && (
                <div class="center">
                  <button type="button" class="button" onClick={loadMore} disabled={listing.more === 'loading'}>
                    {listing.more === 'loading' ? 'Loading…' : 'Show more skills'}
                  </button>
                </div>
              )}
            </>
          ))}
      </div>
    </section>
  );
}
