/**
 * The operators' guide's Metrics section against the code: every metric it names (in the table,
 * the scrape configuration and the alert rules) is one the registry or the facilitator defines,
 * every metric they define is in the table, and its YAML blocks parse.
 */
import { describe, expect, it } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dir, '../..');
const guide = readFileSync(join(ROOT, 'docs/operators.md'), 'utf8');
const section = guide.slice(guide.indexOf('\n## Metrics\n'), guide.indexOf('\n## ', guide.indexOf('\n## Metrics\n') + 1));

/** Every metric defined in src/ (prom-client's `{ name: 'market_…', help: … }`). */
function definedMetrics(dir = join(ROOT, 'src')): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return definedMetrics(path);
    if (!path.endsWith('.ts')) return [];
    return [...readFileSync(path, 'utf8').matchAll(/name: '(market_[a-z_]+)',\s*help:/g)].map((m) => m[1] as string);
  });
}

const HISTOGRAM_SERIES = /_(bucket|count|sum)$/;

describe('the operators’ guide on metrics', () => {
  const defined = new Set(definedMetrics());

  it('names only metrics the servers define', () => {
    const named = new Set([...section.matchAll(/\bmarket_[a-z_]+/g)].map((m) => m[0]));
    const unknown = [...named].filter((name) => !defined.has(name) && !defined.has(name.replace(HISTOGRAM_SERIES, '')));
    expect(unknown).toEqual([]);
  });

  it('lists every metric the servers define in its table', () => {
    const table = section.slice(section.indexOf('| Metric'), section.indexOf('\n\n', section.indexOf('| Metric')));
    expect([...defined].filter((name) => !table.includes(name))).toEqual([]);
  });

  it('gives a scrape configuration and alert rules that parse as YAML', () => {
    const yaml = [...section.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => Bun.YAML.parse(m[1] as string) as Record<string, unknown>);
    expect(yaml.map((doc) => Object.keys(doc))).toEqual([['scrape_configs'], ['groups']]);
    const rules = (yaml[1] as { groups: { rules: { alert: string }[] }[] }).groups[0]!.rules.map((rule) => rule.alert);
    expect(rules).toEqual(expect.arrayContaining(['RelayerEthLow', 'SettlementFailuresRising', 'WebhookBacklog', 'SkillServerDown']));
  });
});
