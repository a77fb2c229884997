/**
 * What a target sends, made safe to write into any report while a person can still read it. Each report
 * writes the target's text inside a structure of its own, and some characters would break out of it or stop
 * it being written: `]]>` ends the CDATA section of a JUnit failure (and xmlbuilder's escape of it replaces
 * only the first: docs/upstream-reports.md), XML 1.0 forbids most control characters, lone surrogates and
 * U+FFFE/U+FFFF (xmlbuilder drops them, or refuses the whole document), and a lone surrogate is no UTF-8.
 * Each is written as a \uXXXX escape instead (`]]>` as `]]\u003e`): inside a JSON text that is the same
 * string, so a JSON body keeps its meaning; anywhere else it shows what came. Tab, line feed and carriage
 * return stay as they are.
 */
const UNSAFE =
  /\]\]>|[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function reportSafe(text: string): string {
  return text.replace(UNSAFE, (unsafe) => (unsafe === ']]>' ? ']]\\u003e' : `\\u${unsafe.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * Text for HTML, SVG and XML, in an element or a quoted attribute: what a target sent made safe (reportSafe),
 * then the markup characters escaped.
 */
export const escapeMarkup = (text: string): string =>
  reportSafe(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
