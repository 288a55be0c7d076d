/** Whitespace, control and invisible format characters: a URL parser drops some of them silently. */
const CONTROL_OR_SPACE = /[\p{Cc}\p{Cf}\p{Z}\s]/u;
/**
 * Characters a shell treats specially (substitution, quoting, separators, redirection, globs,
 * history). An endpoint is pasted into shells (curl snippets), so none may hold one.
 */
const SHELL_SPECIAL = /[$`'"\\;|&<>(){}*!^]/;

/**
 * Why `endpoint` cannot be a skill's endpoint, or `undefined` when it can. The registry refuses
 * what this names (400 naming the field `endpoint`) and `register()` refuses it before sending:
 * an endpoint is a plain absolute http(s) URL, without credentials or fragment, without
 * whitespace or control characters and without shell metacharacters (`$ \` ' " \ ; | & < > ( ) { } * ! ^`;
 * `[` `]` only around an IPv6 host). Whether plain http is allowed is the registry's setting.
 *
 * @example
 * import { endpointProblem } from 'skill-market/registry';
 *
 * endpointProblem('https://skills.example.com'); // undefined
 * endpointProblem('https://skills.example.com/$(id)'); // 'must not contain shell metacharacters (found $)'
 */
export function endpointProblem(endpoint: string): string | undefined {
  if (CONTROL_OR_SPACE.test(endpoint)) return 'must not contain whitespace or control characters';
  const special = SHELL_SPECIAL.exec(endpoint);
  if (special) return `must not contain shell metacharacters (found ${special[0]})`;
  if (!/^https?:\/\//i.test(endpoint) || !URL.canParse(endpoint)) return 'must be an absolute http(s) URL';
  const url = new URL(endpoint);
  if (url.username || url.password) return 'must not contain credentials';
  if (endpoint.includes('#')) return 'must not contain a fragment';
  if (/[[\]]/.test(`${url.pathname}${url.search}`)) return 'must not contain [ or ] outside an IPv6 host';
  return undefined;
}
