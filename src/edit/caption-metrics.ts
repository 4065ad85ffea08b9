// How wide a caption's line is drawn, pure: the advance widths of DejaVu Sans (the captions' font, from
// fonts-dejavu-core), in thousandths of an em, read once from its TrueType tables (hmtx through its cmap) and kept
// here as data, so that lines are broken where they fit the picture and libass never wraps or overflows them. A
// character outside the table counts a whole em (wider than any DejaVu Sans glyph but four), so a line measured
// here is never narrower than drawn.

/** Advances of U+0020-U+007E. */
const ASCII = [
  318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636, 636, 636, 636, 636, 636, 636,
  636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684, 686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863,
  748, 787, 603, 787, 695, 635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550, 635,
  615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392, 634, 592, 818, 592, 592, 525, 636,
  337, 636, 838,
];
/** Advances of U+00A0-U+017F (Latin-1 and Latin Extended-A). */
const LATIN = [
  318, 401, 636, 636, 636, 636, 337, 500, 500, 1000, 471, 612, 838, 361, 1000, 500, 500, 838, 401, 401, 500, 636, 636,
  318, 500, 401, 471, 612, 969, 969, 969, 531, 684, 684, 684, 684, 684, 684, 974, 698, 632, 632, 632, 632, 295, 295,
  295, 295, 775, 748, 787, 787, 787, 787, 787, 838, 787, 732, 732, 732, 732, 611, 605, 630, 613, 613, 613, 613, 613,
  613, 982, 550, 615, 615, 615, 615, 278, 278, 278, 278, 612, 634, 612, 612, 612, 612, 612, 838, 612, 634, 634, 634,
  634, 592, 635, 592, 684, 613, 684, 613, 684, 613, 698, 550, 698, 550, 698, 550, 698, 550, 770, 635, 775, 635, 632,
  615, 632, 615, 632, 615, 632, 615, 632, 615, 775, 635, 775, 635, 775, 635, 775, 635, 752, 634, 916, 695, 295, 278,
  295, 278, 295, 278, 295, 278, 295, 278, 590, 556, 295, 278, 656, 579, 579, 557, 278, 557, 278, 557, 375, 557, 342,
  562, 284, 748, 634, 748, 634, 748, 634, 813, 748, 634, 787, 612, 787, 612, 787, 612, 1070, 1023, 695, 411, 695, 411,
  695, 411, 635, 521, 635, 521, 635, 521, 635, 521, 611, 392, 611, 392, 611, 392, 732, 634, 732, 634, 732, 634, 732,
  634, 732, 634, 732, 634, 989, 818, 611, 592, 611, 685, 525, 685, 525, 685, 525, 352,
];
/** Typographic quotes, dashes and the ellipsis, which transcripts and scripts hold. */
const PUNCTUATION = new Map([
  [0x2018, 318],
  [0x2019, 318],
  [0x201c, 518],
  [0x201d, 518],
  [0x2013, 500],
  [0x2014, 1000],
  [0x2026, 1000],
]);
/** Any other character: a whole em, and a little more (no glyph of the font is wider than 1.07 em). */
const OTHER = 1100;

/** The advance of one character, thousandths of an em. */
function advance(codePoint: number): number {
  if (codePoint >= 0x20 && codePoint <= 0x7e) return ASCII[codePoint - 0x20]!;
  if (codePoint >= 0xa0 && codePoint <= 0x17f) return LATIN[codePoint - 0xa0]!;
  return PUNCTUATION.get(codePoint) ?? OTHER;
}

/** The width of a text set in DejaVu Sans, in ems (libass draws an em a little smaller than the font size). */
export function textEms(text: string): number {
  let sum = 0;
  for (const ch of text) sum += advance(ch.codePointAt(0)!);
  return sum / 1000;
}
