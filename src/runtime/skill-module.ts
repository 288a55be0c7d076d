/**
 * Loading a creator's skills module for `market serve`: our SDK is handed to it as the virtual
 * packages `skill-market/creator` and `skill-market` (a runtime Bun plugin), so the module runs
 * from a folder without node_modules, also inside the compiled binary; then its skills are found
 * in the default export (a map of name → skill) or among its named exports.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as market from 'skill-market';
import * as creator from 'skill-market/creator';
import { isSkill, type Skills } from 'skill-market/creator';

/** The module cannot be loaded or holds no skills: exit code 1 with this message. */
export class SkillModuleError extends Error {
  override readonly name = 'SkillModuleError';
}

/** Package names a skills module may import, and what they resolve to. */
const PROVIDED_PACKAGES: Readonly<Record<string, Record<string, unknown>>> = {
  'skill-market/creator': { ...creator },
  'skill-market': { ...market },
};

let provided = false;
let loads = 0;

/** Installs the plugin that answers imports of our package names (once per process). */
function provideSdk(): void {
  if (provided) return;
  provided = true;
  Bun.plugin({
    name: 'skill-market-sdk',
    setup(build) {
      for (const [name, exports] of Object.entries(PROVIDED_PACKAGES)) build.module(name, () => ({ exports, loader: 'object' }));
    },
  });
}

/**
 * Imports `file` (relative to `cwd`) with our SDK provided, and returns its skills: the default
 * export when it is a map of skills, else every named export that is a skill (named by its export).
 *
 * With `fresh`, the file is imported again even if it was before (its own imports are not).
 *
 * @throws SkillModuleError when the file is missing, fails to load, or exports no skills
 */
export async function loadSkillModule(file: string, cwd = process.cwd(), options: { fresh?: boolean } = {}): Promise<Skills> {
  const path = resolve(cwd, file);
  if (!existsSync(path)) throw new SkillModuleError(`cannot find the skills module ${path}`);
  provideSdk();
  let mod: Record<string, unknown>;
  try {
    // `fresh` (market dev's reload) imports the file anew: Bun keys its module cache by the specifier,
    // query included, for a path (not for a file: URL, whose query it ignores).
    const url = options.fresh ? `${path}?v=${++loads}` : pathToFileURL(path).href;
    mod = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    throw new SkillModuleError(`cannot load ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const fromDefault = mod.default;
  if (fromDefault !== undefined && !isSkill(fromDefault)) {
    if (typeof fromDefault !== 'object' || fromDefault === null)
      throw new SkillModuleError(`the default export of ${file} must be a map of skill name to skill(...)`);
    const entries = Object.entries(fromDefault);
    const notSkills = entries.filter(([, value]) => !isSkill(value)).map(([name]) => name);
    if (entries.length === 0) throw new SkillModuleError(`the default export of ${file} holds no skills`);
    if (notSkills.length > 0)
      throw new SkillModuleError(
        `the default export of ${file} has entries that are not skills: ${notSkills.join(', ')} (define them with skill(options, handler))`,
      );
    return Object.fromEntries(entries) as Skills;
  }
  const named = Object.entries(mod).filter(([name, value]) => name !== 'default' && isSkill(value));
  if (named.length === 0) {
    throw new SkillModuleError(
      `no skills found in ${file}: export them (export const echo = skill(...)) or export default { echo: skill(...) }`,
    );
  }
  return Object.fromEntries(named) as Skills;
}
