// The server's words as the person in the preview view reads them. Tool results, their flags and warnings are written
// for the model: they point into the edit (a JSON pointer, an argument path, cuts counted from 0) and tell it which
// tool to call or which field to set. The view shows the person the same facts, with cuts and overlays numbered as it
// draws them (#1 is the first) and without the model's instructions. Pure (no DOM): bundled into the view, tested as
// a unit.

/** A word only a model acts on: a tool or field name (snake_case, not part of a file name), JSON, a result's field. */
const FOR_MODEL = /(?<![\w./-])[a-z]+(?:_[a-z0-9]+)+(?![\w./-])|[{}]|structuredContent|\bcursor\b|\bcall again\b/;

/** Where a text points into the edit, as the person counts: cut 1 is the first. */
function numberedForPerson(text: string): string {
  const named = (kind: string, index: string) => `${kind} ${Number(index) + 1}`;
  return text
    .replace(/\(at \/video_series_sequential\/(\d+)[^)]*\)/g, (_, i: string) => `(${named('cut', i)})`)
    .replace(/\(at \/audio_overlay\/(\d+)[^)]*\)/g, (_, i: string) => `(${named('overlay', i)})`)
    .replace(/\/video_series_sequential\/(\d+)(?:\/[\w/]*)?/g, (_, i: string) => named('cut', i))
    .replace(/\/audio_overlay\/(\d+)(?:\/[\w/]*)?/g, (_, i: string) => named('overlay', i))
    .replace(/\bclips\[(\d+)\](?:\.[\w.]+)?/g, (_, i: string) => named('cut', i))
    .replace(/\boverlays\[(\d+)\](?:\.[\w.]+)?/g, (_, i: string) => named('overlay', i));
}

/** Asides in parentheses that speak to the model, taken out (innermost first). */
function withoutModelAsides(text: string): string {
  let out = text;
  for (let before = ''; before !== out;) {
    before = out;
    out = out.replace(/\s*\(([^()]*)\)/g, (all, inside: string) => (FOR_MODEL.test(inside) ? '' : all));
  }
  return out;
}

/**
 * A server text as the person reads it: its first line's first sentence (a result's headline; what follows is the
 * model's list), numbered as the view numbers, and of its clauses (between "; ") the first and those that do not
 * speak to the model, without asides that do. A headline's "Not ready: " is left to the view's own words around it.
 */
export function forPerson(text: string): string {
  const line = text.split('\n')[0] ?? '';
  const sentence = line.split(/(?<=[.!?])\s+(?=[A-Z])/)[0] ?? line;
  // "… (cut 2)", where a headline says where its problem is, leads instead: "cut 2: …".
  const numbered = numberedForPerson(sentence.replace(/^Not ready: /, '')).replace(
    /^(.*?)\s*\(((?:cut|overlay) \d+)\)/,
    (_, before: string, where: string) => `${where}: ${before}`,
  );
  const [first = '', ...rest] = numbered.split('; ');
  const kept = [withoutModelAsides(first), ...rest.filter((c) => !FOR_MODEL.test(c)).map(withoutModelAsides)];
  return kept
    .map((c) => c.trim())
    .filter(Boolean)
    .join('; ')
    .replace(/[.:]$/, '');
}
