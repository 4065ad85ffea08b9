// A small XML reader for timeline files (FCPXML): elements, attributes, text, the five named entities and
// character references. It skips the prolog, comments, processing instructions and DOCTYPE (no DTD is read,
// so no external entity can be fetched or expanded). Errors name the line.

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
  line: number;
}

export class XmlError extends Error {}

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const MAX_DEPTH = 200;
// Sticky: matched where the reader stands, however much space a tag holds.
const START_TAG = /<([\w:.-]+)/y;
const END_TAG = /<\/([\w:.-]+)\s*>/y;
const TAG_END = /\s*(\/?)>/y;

function decode(s: string, line: () => number): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!Number.isFinite(code) || code < 0 || code > 0x10ffff)
        throw new XmlError(`line ${line()}: bad character reference ${whole}`);
      return String.fromCodePoint(code);
    }
    const named = NAMED[ref];
    if (named === undefined)
      throw new XmlError(`line ${line()}: unknown entity ${whole} (only the five XML entities are read)`);
    return named;
  });
}

export function parseXml(text: string): XmlElement {
  let i = 0;
  const newlines: number[] = [];
  for (let k = text.indexOf('\n'); k >= 0; k = text.indexOf('\n', k + 1)) newlines.push(k);
  // Line of a position: newlines before it, by binary search (elements take their line as they open).
  const lineAt = (pos: number) => {
    let lo = 0;
    let hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid]! < pos) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const skip = (end: string, what: string) => {
    const j = text.indexOf(end, i);
    if (j < 0) throw new XmlError(`line ${lineAt(i)}: ${what} is not closed`);
    i = j + end.length;
  };
  while (i < text.length) {
    const lt = text.indexOf('<', i);
    const chunk = lt < 0 ? text.slice(i) : text.slice(i, lt);
    if (chunk.trim()) {
      const top = stack.at(-1);
      if (!top) throw new XmlError(`line ${lineAt(i)}: text outside the root element`);
      const at = i;
      top.text += decode(chunk, () => lineAt(at));
    }
    if (lt < 0) break;
    i = lt;
    if (text.startsWith('<?', i)) skip('?>', 'a processing instruction');
    else if (text.startsWith('<!--', i)) skip('-->', 'a comment');
    else if (text.startsWith('<![CDATA[', i)) {
      const j = text.indexOf(']]>', i);
      if (j < 0) throw new XmlError(`line ${lineAt(i)}: CDATA is not closed`);
      const top = stack.at(-1);
      if (top) top.text += text.slice(i + 9, j);
      i = j + 3;
    } else if (text.startsWith('<!', i)) {
      // DOCTYPE, possibly with an internal subset in brackets: skipped whole, never interpreted. One pass to its
      // closing ">" outside quotes and brackets (searching the rest of the file for "[" at each one was quadratic).
      let j = i + 2;
      let quote = '';
      let depth = 0;
      for (; j < text.length; j++) {
        const c = text[j]!;
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '[') depth++;
        else if (c === ']') depth = Math.max(0, depth - 1);
        else if (c === '>' && depth === 0) break;
      }
      if (j >= text.length) throw new XmlError(`line ${lineAt(i)}: a declaration is not closed`);
      i = j + 1;
    } else if (text.startsWith('</', i)) {
      END_TAG.lastIndex = i;
      const m = END_TAG.exec(text);
      if (!m) throw new XmlError(`line ${lineAt(i)}: a malformed end tag`);
      const open = stack.pop();
      if (!open || open.name !== m[1])
        throw new XmlError(
          `line ${lineAt(i)}: </${m[1]}> closes ${open ? `<${open.name}> (line ${open.line})` : 'nothing'}`,
        );
      i += m[0].length;
    } else {
      const start = i;
      START_TAG.lastIndex = i;
      const m = START_TAG.exec(text);
      if (!m) throw new XmlError(`line ${lineAt(i)}: a "<" that starts no tag`);
      i += m[0].length;
      const el: XmlElement = { name: m[1]!, attrs: {}, children: [], text: '', line: lineAt(start) };
      const attr = /\s*([\w:.-]+)\s*=\s*("([^"]*)"|'([^']*)')/y;
      for (;;) {
        attr.lastIndex = i;
        const a = attr.exec(text);
        if (!a) break;
        if (Object.hasOwn(el.attrs, a[1]!)) throw new XmlError(`line ${lineAt(i)}: attribute ${a[1]} given twice`);
        el.attrs[a[1]!] = decode(a[3] ?? a[4] ?? '', () => lineAt(start));
        i = attr.lastIndex;
      }
      TAG_END.lastIndex = i;
      const end = TAG_END.exec(text);
      if (!end) throw new XmlError(`line ${lineAt(i)}: the tag <${el.name}> is malformed`);
      i += end[0].length;
      const parent = stack.at(-1);
      if (parent) parent.children.push(el);
      else if (root) throw new XmlError(`line ${el.line}: a second root element <${el.name}>`);
      else root = el;
      if (!end[1]) {
        stack.push(el);
        if (stack.length > MAX_DEPTH) throw new XmlError(`line ${el.line}: elements nest more than ${MAX_DEPTH} deep`);
      }
    }
  }
  if (stack.length) throw new XmlError(`<${stack.at(-1)!.name}> (line ${stack.at(-1)!.line}) is never closed`);
  if (!root) throw new XmlError('no element found');
  return root;
}

/**
 * Text with the five XML characters escaped, for attribute values and text. Characters XML 1.0 does not allow at all
 * (control characters but tab, line feed and return; lone surrogates; U+FFFE, U+FFFF) become U+FFFD, and tab, line
 * feed and return are written as references (an attribute would fold them into spaces): a media name can hold any
 * of them, and one would make the whole file ill-formed.
 */
export function escapeXml(s: string): string {
  return s
    .replace(
      // eslint-disable-next-line no-control-regex -- characters XML 1.0 cannot carry are what this replaces
      /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
      '\uFFFD',
    )
    .replace(
      /[<>&"'\t\n\r]/g,
      (c) =>
        ({
          '<': '&lt;',
          '>': '&gt;',
          '&': '&amp;',
          '"': '&quot;',
          "'": '&apos;',
          '\t': '&#9;',
          '\n': '&#10;',
          '\r': '&#13;',
        })[c]!,
    );
}
