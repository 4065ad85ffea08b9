// Letter-to-sound for words the dictionary lacks (names, misspellings, new words), pure: ordered, context-sensitive
// rewrite rules from letters to ARPAbet phones, in the manner of the NRL rules (Elovitz et al., 1976), written here
// for cmudict's phone set. Walking a word left to right, the first rule of the current letter whose letters are
// there and whose contexts hold gives its phones and consumes its letters. No stress: cmudict as Debian ships it has
// none. How close it comes to the dictionary is measured in test/unit/analysis-phones.test.ts.
import { phonesOf } from './dictionary.js';

/*
 * A rule is `left<letters>right PHONES` (no phones: silent). The contexts are regular expressions over the word in
 * lower case, padded with `_` at both ends (so `_` is the word's edge), with these classes:
 *   V a vowel letter (a e i o u y)    C a consonant letter    F a front vowel (e i y)
 *   D a voiced consonant (b d g j l m n r v w z)
 *   M a tail after which a vowel is long ("magic e"): e, es, ed, er, ers, ing, ings, ely, ement(s), eful, eless
 *     at the end of the word
 * Rules are tried in order; each letter's list ends with its default.
 */
const RULES: Record<string, string[]> = {
  a: [
    '_<a>_ AH',
    '<aa> AA',
    '_<are>_ AA R',
    '<air> EH R',
    '<augh>t AO',
    '<augh> AE F',
    '<au> AO',
    '<aw> AO',
    '<ay> EY',
    '<ai> EY',
    'w<ar> AO R',
    'qu<ar> AO R',
    '<ar>e EH R',
    '<ar>iV EH R',
    '<ar>y_ EH R',
    '<arr> EH R',
    '<ar>_ AA R',
    '<ar>C AA R',
    '<alk> AO K',
    '<all>_ AO L',
    '<all>C AO L',
    '_<al>C AO L',
    '<al>_ AH L',
    'C<able>_ AH B AH L',
    'C<ably>_ AH B L IY',
    '<a>tion EY',
    '<a>nge EY',
    '<a>ste(?:s|d)?_ EY',
    'VC+<age>_ IH JH',
    'w<a>t AO',
    '<a>CM EY',
    '<a>C[iu]V EY',
    'w<a>CC AA',
    'w<a>C_ AA',
    '<a>_ AH',
    '_<a>C[aeiou] AH',
    'VC+<a>nce_ AH',
    'VC+<a>nt_ AH',
    'VC+<a>l_ AH',
    'VC+<a>C_ AH',
    '<a> AE',
  ],
  b: ['<bb> B', 'm<b>_', 'm<b>s_', '<b> B'],
  c: [
    '<chr> K R',
    '<c>q',
    's<ch> K',
    '<ch> CH',
    '<ck> K',
    '<cc>F K S',
    '<cc> K',
    's<c>F',
    'V<ci>[aou] SH',
    '<c>F S',
    '<c> K',
  ],
  d: ['<dd> D', '<dg>e JH', '<d> D'],
  e: [
    '_<e>_ IY',
    '_C{1,2}<e>_ IY',
    '_<ewe>_ Y UW',
    '<eau> OW',
    '<eigh> EY',
    '<eir> EH R',
    '<ei> IY',
    '<eo> IY',
    '<ew> UW',
    '_th<ey> EY',
    '_C{1,2}<ey>_ EY',
    '<ey>_ IY',
    '<ear>C ER',
    '_<ear> IY R',
    '<ear> IH R',
    '<ee> IY',
    '<ea>(?:d|th|lth|sure|vy|ther|nt|f_) EH',
    '<ea> IY',
    'w<ere>_ ER',
    '(?:th|wh)<ere>_ EH R',
    '<ere>_ IH R',
    '<err> EH R',
    '<er>ed_ ER',
    '<er>ing_ ER',
    'VC+<er>V ER',
    '<er>V EH R',
    '<er> ER',
    '_C{1,2}<ed>_ EH D',
    '[td]<ed>_ IH D',
    '(?:[pkfsx]|sh|ch)<ed>_ T',
    '<ed>_ D',
    '(?:[sxz]|sh|ch|c|g)<es>_ IH Z',
    'C<es>_ Z',
    '<e>_',
    '<e>C(?:e|es|ed)_ IY',
    'VC<e>(?:ly|ful|less|ness|ment|ments|thing|times?|where|body|one)_',
    '<en>_ AH N',
    'VC+<e>nts?_ AH',
    'C<el>_ AH L',
    '_<e>xV IH',
    '_(?:b|d|r|pr)<e>CV IH',
    '<e> EH',
  ],
  f: ['<ff> F', '<f> F'],
  g: [
    '<gg> G',
    '_<gh> G',
    '<gh>',
    '<gn>_ N',
    '_<gn> N',
    '<g>e_ JH',
    '<gue>_ G',
    '<gu>F G',
    '_<g> G',
    '<g>F JH',
    '<g> G',
  ],
  h: ['_<h> HH', '<h>V HH', '<h>'],
  i: [
    '<igh> AY',
    'VC+<ier>s?_ IY ER',
    '_C{1,2}<ie>_ AY',
    '<ie>_ IY',
    '_C{1,2}<ied>_ AY D',
    '<ied>_ IY D',
    '<ie> IY',
    '<irr> IH R',
    '<ir>e AY ER',
    '<ir>V AY R',
    '<ir> ER',
    '<i>gn AY',
    '<i>nd_ AY',
    '<i>ld_ AY',
    'VC+<i>ve_ IH',
    '<i>CM AY',
    '<i>[ao] IY',
    '_C{1,2}<i>_ AY',
    '<i>_ IY',
    '<ing> IH NG',
    '<i> IH',
  ],
  j: ['<j> JH'],
  k: ['_<kn> N', '<k> K'],
  l: ['<ll> L', 'C<les>_ AH L Z', 'C<led>_ AH L D', 'C<le>_ AH L', '<l> L'],
  m: ['<mm> M', '<m> M'],
  n: ['m<n>_', '<nn> N', '<n>ge N', '<ng> NG', '<n>k NG', '<n> N'],
  o: [
    '_<of>_ AH V',
    '_<one>_ W AH N',
    '_(?:t|d|wh)<o>_ UW',
    '<o>_ OW',
    '<ought> AO T',
    'thr<ough> UW',
    '<ough>_ OW',
    '<ough> AH F',
    '<oul>d UH',
    '_<our> AW ER',
    'h<our> AW ER',
    'VC+<our>_ ER',
    '<our> AO R',
    'y<ou> UW',
    '<ou>ble AH',
    '<ou>p UW',
    '<ous>_ AH S',
    '<ou> AW',
    '<oor> AO R',
    '<ook> UH K',
    '<oo> UW',
    '<oa>r AO',
    '<oa> OW',
    '<oi> OY',
    '<oy> OY',
    '<ow>_ OW',
    '<ow> AW',
    'w<or> ER',
    'VC+<or>s?_ ER',
    '<orr> AO R',
    '<or> AO R',
    '_(?:c|s)<o>me AH',
    '<o>ve_ AH',
    '<o>CM OW',
    '<o>ld OW',
    'VC+<o>[nm]_ AH',
    '<o> AA',
  ],
  p: ['<ph> F', '<pp> P', '_<ps> S', '<p> P'],
  q: ['<que>_ K', '<qu> K W', '<q> K'],
  r: ['<rr> R', '<rh> R', '<r> R'],
  s: [
    '<sh> SH',
    '<sch> S K',
    '<ss> S',
    'V<sion> ZH AH N',
    '<sion> SH AH N',
    'V<sure> ZH ER',
    '<sure> SH ER',
    '[aeiou]e<s>_ Z',
    '[wy]<s>_ Z',
    'D<s>_ Z',
    '_<s> S',
    'V<s>V Z',
    '<s> S',
  ],
  t: [
    '_<th>(?:e|is|at|ese|ose|ey|em|en|an|us|y|ee|ine)_ DH',
    '_<th>(?:ere|eir|ough_) DH',
    'V<th>er DH',
    '<th>e_ DH',
    '<th> TH',
    '<tch> CH',
    's<tion> CH AH N',
    '<tion> SH AH N',
    '<tial> SH AH L',
    '<tious> SH AH S',
    '<tient> SH AH N T',
    '<ture> CH ER',
    's<t>(?:en|le)_',
    '<tt> T',
    '<t> T',
  ],
  u: [
    '<ue>_ UW',
    '(?:p|b|f)<u>(?:ll|sh|t_) UH',
    '(?:_|[bcfghkmpv])<u>CM Y UW',
    '<u>CM UW',
    '_<u>CV Y UW',
    '<urr> ER',
    '<ur>V UH R',
    '<ur> ER',
    '<ui> UW',
    '<u>_ UW',
    '<u> AH',
  ],
  v: ['<v> V'],
  w: ['_<wh>o HH', '<wh> W', '_<wr> R', '<w> W'],
  x: ['_<x> Z', '_e<x>V G Z', '<x> K S'],
  y: ['_<y> Y', '<y>V Y', '_C{1,2}<y>_ AY', '<y>_ IY', '<y>CM AY', '<y> IH'],
  z: ['<zz> Z', '<z> Z'],
};

interface Rule {
  letters: string;
  left: RegExp;
  right: RegExp;
  phones: Uint8Array;
}

const CLASSES: Record<string, string> = {
  V: '[aeiouy]',
  C: '[bcdfghjklmnpqrstvwxz]',
  F: '[eiy]',
  D: '[bdgjlmnrvwz]',
  M: '(?:e|es|ed|er|ers|ing|ings|ely|ement|ements|eful|eless)_',
};
const context = (pattern: string) => pattern.replace(/[VCFDM]/g, (c) => CLASSES[c]!);

function compile(rule: string): Rule {
  const m = /^(\S*)<([a-z]+)>(\S*)\s*(.*)$/.exec(rule);
  if (!m) throw new Error(`bad letter-to-sound rule: ${rule}`);
  return {
    letters: m[2]!,
    left: new RegExp(`(?:${context(m[1]!)})$`),
    right: new RegExp(`^(?:${context(m[3]!)})`),
    phones: m[4] ? phonesOf(m[4]) : new Uint8Array(0),
  };
}

const COMPILED = new Map(Object.entries(RULES).map(([letter, rules]) => [letter, rules.map(compile)]));

const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
];
ONES.push('thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen');
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** A whole number below a million in words ("2024" -> "two thousand twenty four"), as a recogniser would hear it. */
export function numberWords(n: number): string[] {
  if (n < 20) return [ONES[n]!];
  if (n < 100) return [TENS[Math.floor(n / 10)]!, ...(n % 10 ? [ONES[n % 10]!] : [])];
  if (n < 1000) return [ONES[Math.floor(n / 100)]!, 'hundred', ...(n % 100 ? numberWords(n % 100) : [])];
  return [...numberWords(Math.floor(n / 1000)), 'thousand', ...(n % 1000 ? numberWords(n % 1000) : [])];
}

/** Phones for the letters of a word, by the rules (other characters, apostrophes too, are silent). */
export function lettersToPhones(word: string): Uint8Array {
  const padded = `_${word.toLowerCase().replace(/[^a-z]/g, '')}_`;
  const out: number[] = [];
  for (let i = 1; i < padded.length - 1;) {
    const before = padded.slice(0, i);
    const rule = COMPILED.get(padded[i]!)!.find(
      (r) => padded.startsWith(r.letters, i) && r.left.test(before) && r.right.test(padded.slice(i + r.letters.length)),
    )!;
    out.push(...rule.phones);
    i += rule.letters.length;
  }
  return Uint8Array.from(out);
}
