/**
 * The human face of a skill server, as crawlers look for it: `GET /` (a small page naming the server
 * and its skills, linking its icon and its OpenAPI document; the default `info.contact.url`) and
 * `GET /favicon.svg` (a built-in icon). A crawler takes the page's icon link first (the `iconUrl`
 * option when given), then `/favicon.svg`.
 */
import { catalogueIconUrl, formatPrice } from '../../x402/index';
import type { SkillRoute } from '../scheme';

/** @internal */
export const FAVICON_PATH = '/favicon.svg';

/** @internal The built-in icon: a spark on a rounded square. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#1d4ed8"/>' +
  '<path d="M36 8 16 36h14l-4 20 22-30H34z" fill="#fff"/></svg>';

/** @internal What the server is, in one line (the page's and the OpenAPI document's description). */
export const SERVER_DESCRIPTION = 'Paid skills: each is POST /<name> with a JSON body, paid per call with x402.';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const html = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * The page at `/`: the server's title, a line on how to call, one line per skill (path, price,
 * description), the icon (`iconUrl` when catalogues may show it, else the built-in one).
 *
 * @internal
 */
export function indexPage(routes: Iterable<SkillRoute>, meta: { title: string; serverUrl: string; iconUrl?: string | undefined }): string {
  const icon = catalogueIconUrl(meta.iconUrl) ?? `${meta.serverUrl}${FAVICON_PATH}`;
  const items = [...routes].map((route) => {
    const price = formatPrice(route.amount, route.terms.asset.decimals);
    const about = route.skill.description ? ` - ${html(route.skill.description.slice(0, 300))}` : '';
    return `<li><code>POST /${html(route.name)}</code> ${price} USD${about}</li>`;
  });
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${html(meta.title)}</title>`,
    `<meta name="description" content="${html(SERVER_DESCRIPTION)}">`,
    `<meta property="og:title" content="${html(meta.title)}"><meta property="og:image" content="${html(icon)}">`,
    `<link rel="icon" href="${html(icon)}">`,
    '</head><body>',
    `<h1>${html(meta.title)}</h1>`,
    `<p>${html(SERVER_DESCRIPTION)} Without a payment a call answers 402 with the terms.</p>`,
    `<ul>${items.join('')}</ul>`,
    '<p>For machines: <a href="/openapi.json">/openapi.json</a>, <a href="/.well-known/x402">/.well-known/x402</a>, <a href="/health">/health</a>.</p>',
    '</body></html>',
  ].join('\n');
}
