/**
 * The public exports of the installed SDK as its declarations state them, read with the
 * TypeScript compiler API (the SDK's own dev dependency, the one TypeDoc uses): for each entry,
 * every exported name and whether it is a value (importable from JavaScript) or only a type, and
 * the doc comment its declarations carry.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
// The SDK's TypeScript 6 (with a compiler API), not the repository's TypeScript 7 (a compiler only).
// biome-ignore lint/style/noRestrictedImports: the types of the SDK workspace's own TypeScript, not SDK code
import type * as TS from '../../sdk/node_modules/typescript/lib/typescript';
import { SDK_DIR } from '../../scripts/sdk-package';

const ts = createRequire(join(SDK_DIR, 'package.json'))('typescript') as typeof TS;

export interface PublicExport {
  name: string;
  value: boolean;
}

/** A value export: a value, reached through no `export type` / `type` specifier on the way. */
function isValueExport(checker: TS.TypeChecker, symbol: TS.Symbol): boolean {
  let current = symbol;
  while (current.flags & ts.SymbolFlags.Alias) {
    for (const declaration of current.declarations ?? []) {
      if (ts.isExportSpecifier(declaration) && (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly)) return false;
      if (ts.isImportSpecifier(declaration) && (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly)) return false;
    }
    current = checker.getImmediateAliasedSymbol(current) ?? checker.getAliasedSymbol(current);
    if (current === symbol) break;
  }
  return (current.flags & ts.SymbolFlags.Value) !== 0;
}

/**
 * Each specifier's exported symbols, resolved from `project` as `moduleResolution: bundler` does,
 * mapped by `read` with the program's type checker; sorted by name.
 */
function readExports<T extends { name: string }>(
  project: string,
  specifiers: string[],
  read: (checker: TS.TypeChecker, symbol: TS.Symbol) => T,
): Record<string, T[]> {
  const options: TS.CompilerOptions = {
    module: ts.ModuleKind.Preserve,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const from = join(project, 'index.ts');
  const files = specifiers.map((specifier) => {
    const resolved = ts.resolveModuleName(specifier, from, options, host).resolvedModule;
    if (!resolved) throw new Error(`${specifier} does not resolve from ${project}`);
    return resolved.resolvedFileName;
  });
  const program = ts.createProgram(files, options, host);
  const checker = program.getTypeChecker();
  const answer: Record<string, T[]> = {};
  specifiers.forEach((specifier, i) => {
    const source = program.getSourceFile(files[i]!);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`no declarations for ${specifier}`);
    answer[specifier] = checker
      .getExportsOfModule(module)
      .map((symbol) => read(checker, symbol))
      .sort((a, b) => a.name.localeCompare(b.name));
  });
  return answer;
}

/** `{specifier: exports}` for each specifier, resolved from `project` as `moduleResolution: bundler` does. */
export function publicExports(project: string, specifiers: string[]): Record<string, PublicExport[]> {
  return readExports(project, specifiers, (checker, symbol) => ({ name: symbol.name, value: isValueExport(checker, symbol) }));
}

/** A TypeScript module that re-exports every export of every entry (values and types), each under a unique name. */
export function everyExportModule(exports: Record<string, PublicExport[]>): string {
  return Object.entries(exports)
    .map(([specifier, list]) => {
      const prefix = specifier.replace(/[^a-z0-9]+/gi, '_');
      const values = list.filter((e) => e.value).map((e) => `${e.name} as ${prefix}__${e.name}`);
      const types = list.filter((e) => !e.value).map((e) => `${e.name} as ${prefix}__${e.name}`);
      return [
        values.length > 0 ? `export { ${values.join(', ')} } from '${specifier}';` : '',
        types.length > 0 ? `export type { ${types.join(', ')} } from '${specifier}';` : '',
      ].join('\n');
    })
    .join('\n');
}

export interface ExportDocs extends PublicExport {
  /** A value whose type is a TypeBox schema (the registry contract's and the x402 wire schemas). */
  schema: boolean;
  /** Its declarations carry a doc comment with text. */
  documented: boolean;
  /** The JSDoc tag names on its declarations (e.g. `example`, `throws`). */
  tags: string[];
}

/** Every export of each specifier, resolved from `project`, with the doc comment its declarations carry. */
export function exportDocs(project: string, specifiers: string[]): Record<string, ExportDocs[]> {
  return readExports(project, specifiers, (checker, symbol) => {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const type = target.flags & ts.SymbolFlags.Variable ? checker.getTypeOfSymbol(target) : undefined;
    return {
      name: symbol.name,
      value: isValueExport(checker, symbol),
      schema: type !== undefined && type.getProperty('static') !== undefined && type.getProperty('params') !== undefined,
      documented: ts.displayPartsToString(target.getDocumentationComment(checker)).trim() !== '',
      tags: target.getJsDocTags(checker).map((tag) => tag.name),
    };
  });
}
