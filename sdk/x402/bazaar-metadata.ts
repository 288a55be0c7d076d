/**
 * The Bazaar's service metadata (`serviceName`, `tags`, `iconUrl`) under the rules of the x402
 * `bazaar` specification: a value a catalogue would drop is never sent. Stricter in one point:
 * an icon is sent only over https.
 */

const PRINTABLE_ASCII = /^[\x20-\x7E]+$/;
const MAX_TEXT = 32;
const MAX_TAGS = 5;
const MAX_ICON_URL = 2048;
const LOOPBACK_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);

/**
 * Non-empty printable ASCII of at most 32 characters (a service name, a tag).
 *
 * @example
 * isCatalogueText('Tide Co'); // true
 * isCatalogueText('Café'); // false: not ASCII
 */
export function isCatalogueText(value: string | null | undefined): value is string {
  return typeof value === 'string' && value.length <= MAX_TEXT && PRINTABLE_ASCII.test(value) && value.trim() !== '';
}

/**
 * The first five valid tags, each once (compared without case), in order.
 *
 * @example
 * catalogueTags(['tides', 'TIDES', 'sea\u0007', 'weather']); // ['tides', 'weather']
 */
export function catalogueTags(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const tags: string[] = [];
  for (const name of names) {
    if (tags.length === MAX_TAGS) break;
    if (!isCatalogueText(name) || seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    tags.push(name);
  }
  return tags;
}

/**
 * The URL when it may be shown as a service's icon: absolute https, at most 2048 characters, no
 * credentials or control characters, and a host that is a name (not an IP address in any
 * notation, not a loopback name); otherwise undefined.
 *
 * @example
 * catalogueIconUrl('https://cdn.example/icon.png'); // 'https://cdn.example/icon.png'
 * catalogueIconUrl('https://127.0.0.1/icon.png'); // undefined
 */
export function catalogueIconUrl(value: string | null | undefined): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_ICON_URL || !PRINTABLE_ASCII.test(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '') return undefined;
  let host: string;
  try {
    host = decodeURIComponent(url.hostname).toLowerCase().replace(/\.$/, '');
  } catch {
    return undefined;
  }
  // The URL parser has already turned decimal, octal and hex IPv4 forms into dotted quads.
  if (host === '' || host.startsWith('[') || /^[\d.]+$/.test(host) || /^0x[0-9a-f]+$/.test(host) || LOOPBACK_NAMES.has(host)) {
    return undefined;
  }
  return value;
}

/** The service metadata of a resource (`PaymentRequired.resource`, a catalogue's listing): only the fields the rules keep. */
export interface ServiceMetadata {
  serviceName?: string;
  tags?: string[];
  iconUrl?: string;
}

/**
 * The metadata a resource may carry: the first valid of `names` as `serviceName`, the
 * {@link catalogueTags} of `tags`, the {@link catalogueIconUrl} of `iconUrl`; a field with nothing
 * valid is left out.
 *
 * @example
 * serviceMetadata(['Café', 'Tide Co'], ['tides'], 'http://cdn.example/i.png'); // { serviceName: 'Tide Co', tags: ['tides'] }
 */
export function serviceMetadata(
  names: readonly (string | null | undefined)[],
  tags: readonly string[],
  iconUrl: string | null | undefined,
): ServiceMetadata {
  const serviceName = names.find(isCatalogueText);
  const kept = catalogueTags(tags);
  const icon = catalogueIconUrl(iconUrl);
  return {
    ...(serviceName ? { serviceName } : {}),
    ...(kept.length > 0 ? { tags: kept } : {}),
    ...(icon ? { iconUrl: icon } : {}),
  };
}
