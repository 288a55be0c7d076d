/**
 * Quoting for the copy-ready snippets: whatever a snippet takes from a listing (endpoint, slug,
 * price, the registry's URL, an example input) is quoted for the language it is pasted into, so
 * that pasting it runs exactly the command shown and nothing a listing smuggled in.
 */

/**
 * One POSIX shell word: the text in single quotes, each `'` written as `'\''` (inside single
 * quotes the shell expands nothing: no `$( )`, backticks, `;`, `|`, `&`, globs or newlines).
 *
 * @example shellQuote("it's $(id)") // 'it'\''s $(id)'
 */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * A JavaScript/TypeScript string literal of `text` (JSON's escaping, which JavaScript reads alike).
 *
 * @example jsString("a'b\n") // "a'b\n" with the quote kept and the newline escaped
 */
export function jsString(text: string): string {
  return JSON.stringify(text);
}
