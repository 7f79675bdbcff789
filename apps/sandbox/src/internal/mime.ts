/**
 * Headers of a MIME message (first occurrence wins), names lower-cased, folded lines unfolded.
 * Only the head is looked at, so a large body costs nothing but the search for its end.
 */
export function mimeHeaders(text: string): Map<string, string> {
  const end = text.search(/\r?\n\r?\n/);
  const head = (end === -1 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}
