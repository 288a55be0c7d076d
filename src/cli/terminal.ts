/**
 * Text from elsewhere (a registry's listings and refusals, a skill's answer) made safe to print on
 * a terminal: a description holding escape sequences could otherwise move the cursor, rewrite
 * earlier lines, retitle the window or plant a hyperlink.
 */

/**
 * Escape sequences as terminals read them (7-bit ESC and 8-bit C1 introducers): control strings
 * (OSC, DCS, SOS, PM, APC) up to their terminator, CSI with parameters and final byte, and
 * two-character escapes.
 */
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d-\u009f])[\s\S]*?(?:\u0007|\u001b\\|\u009c|$)|(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g;
/** What is left of control characters: C0 but tab and newline, DEL, C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` without escape sequences and control characters (tab and newline stay). */
export function terminalText(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(CONTROL, '');
}

/**
 * JSON of `value` for a terminal: indented, or one line with `compact`. JSON escapes C0 controls
 * (ESC comes out as `\u001b`) but writes DEL and C1 raw; those are escaped too, so the text is the
 * same JSON value and nothing in it acts on the terminal.
 */
export function terminalJson(value: unknown, compact = false): string {
  const json = compact ? JSON.stringify(value) : JSON.stringify(value, null, 2);
  return String(json).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
