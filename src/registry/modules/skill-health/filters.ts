import { sql, type SQL } from 'drizzle-orm';
import type { HealthFilter } from 'skill-market/registry';
import { serverHealth, skills } from '../../../db/schema';

const healthOf = (condition: SQL) =>
  sql`exists (select 1 from ${serverHealth} where ${serverHealth.serverUrl} = ${skills.serverUrl} and ${condition})`;

/**
 * The discovery condition for `status`: `up`, `down` or `unknown` (never answered a probe) keep
 * those skills only; `any` keeps all. Without a status, a skill whose server has been down since
 * before `hiddenBefore` is left out until it answers again.
 */
export function healthCondition(status: HealthFilter | undefined, hiddenBefore: Date): SQL | undefined {
  switch (status) {
    case 'any':
      return undefined;
    case 'up':
    case 'down':
      return healthOf(sql`${serverHealth.status} = ${status}`);
    case 'unknown':
      return sql`not ${healthOf(sql`${serverHealth.status} in ('up', 'down')`)}`;
    case undefined:
      return sql`not ${healthOf(sql`${serverHealth.status} = 'down' and ${serverHealth.downSince} < ${hiddenBefore.toISOString()}::timestamptz`)}`;
  }
}
