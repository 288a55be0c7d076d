/**
 * A listing's price as people read it, in one place for the pages, the CLI and the MCP server: a
 * usage-based skill's price is the most a call costs, so it reads "up to $0.01".
 */
import type { SkillView } from './contract/skills';

/**
 * `"$0.01"` for a flat price, `"up to $0.01"` for a usage-based one (`usageBased`: the skill
 * charges what each call used, at most its price). A listing that does not say (an older
 * registry) is a flat price.
 *
 * @example
 * priceLabel({ price: '$0.01', usageBased: true }); // "up to $0.01"
 * priceLabel({ price: '$0.003' }); // "$0.003"
 * console.log(`${skill.slug}  ${priceLabel(skill)} a call`);
 */
export function priceLabel(skill: Pick<SkillView, 'price'> & { usageBased?: boolean | undefined }): string {
  return skill.usageBased ? `up to ${skill.price}` : skill.price;
}
