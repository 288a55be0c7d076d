/**
 * What catalogues that crawl x402 servers would silently drop or refuse, said once when a skill
 * server starts: a service name, tags or an icon the x402 Bazaar does not keep, schemas too large
 * for the 402 header, and prices under what CDP's facilitator settles. The server still serves;
 * each warning names the limit and who sets it, so a creator is never left unindexed unknowingly.
 */
import { catalogueIconUrl, catalogueTags, isCatalogueText, parsePrice } from '../../x402/index';
import type { Skills } from '../skill';
import { bazaarExtension, declarationOf } from './bazaar';

/** The least CDP's facilitator settles: $0.001 (micro-USDC). */
const CDP_MINIMUM_ATOMIC = 1000n;

/** Whether a facilitator URL is CDP's (the Bazaar's own facilitator). */
const isCdp = (url: string | undefined) => {
  try {
    return url !== undefined && new URL(url).hostname.endsWith('cdp.coinbase.com');
  } catch {
    return false;
  }
};

/** The server-wide catalogue settings of `serve()`. */
export interface CatalogueSettings {
  serviceName?: string | undefined;
  iconUrl?: string | undefined;
  /** Groups every skill is listed under besides its own. */
  groups?: readonly string[] | undefined;
  facilitatorUrl?: string | undefined;
}

/**
 * One plain sentence per value a crawling catalogue would drop or refuse.
 *
 * @example
 * catalogueLimitWarnings(skills, { serviceName: 'A name far longer than thirty-two characters' });
 * // ['serviceName "A name far longer…" is left out of the 402: the x402 Bazaar keeps printable ASCII of at most 32 characters']
 */
export function catalogueLimitWarnings(skills: Skills, settings: CatalogueSettings): string[] {
  const warnings: string[] = [];
  if (settings.serviceName !== undefined && !isCatalogueText(settings.serviceName)) {
    warnings.push(
      `serviceName "${settings.serviceName}" is left out of the 402: the x402 Bazaar keeps printable ASCII of at most 32 characters`,
    );
  }
  if (settings.iconUrl !== undefined && catalogueIconUrl(settings.iconUrl) === undefined) {
    warnings.push(`iconUrl ${settings.iconUrl} is left out of the 402: catalogues show only an https icon at a named host`);
  }
  const cdp = isCdp(settings.facilitatorUrl);
  for (const [name, skill] of Object.entries(skills)) {
    const groups = [...skill.groups, ...(settings.groups ?? [])];
    const kept = new Set(catalogueTags(groups).map((g) => g.toLowerCase()));
    const dropped = [...new Set(groups.filter((g) => !kept.has(g.toLowerCase())))];
    if (dropped.length > 0) {
      warnings.push(
        `skill "${name}": groups ${dropped.map((g) => `"${g}"`).join(', ')} are not sent as tags: the x402 Bazaar keeps at most 5, each printable ASCII of at most 32 characters`,
      );
    }
    // The 402 declares the schemas only while they fit (declarationOf drops the output, then the input).
    const declared = JSON.stringify(declarationOf(skill));
    const input = skill.inputSchema ?? null;
    const lostOutput = declared !== JSON.stringify(bazaarExtension(input, skill.outputSchema ?? null));
    const lostInput = lostOutput && input !== null && declared !== JSON.stringify(bazaarExtension(input, null));
    if (lostOutput) {
      const what = lostInput ? (skill.outputSchema ? 'input and output schemas are' : 'input schema is') : 'output schema is';
      warnings.push(
        `skill "${name}": its ${what} left out of the 402, whose header a crawler reads only up to 16 KB: shorten the schemas so catalogues can build a valid request`,
      );
    }
    if (cdp && parsePrice(skill.price) < CDP_MINIMUM_ATOMIC) {
      warnings.push(
        `skill "${name}" at ${skill.price} is under $0.001, the least CDP's facilitator settles: its payments through it are refused`,
      );
    }
  }
  return warnings;
}
