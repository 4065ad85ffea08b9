// Issue 32 item 1 (and item 8's share of it): clipped words and dead air at cuts by words. Speech made at bench time
// with flite, whose phone segments give every word's TRUE start and end (the same mapping as
// test/helpers/flite-words.ts): sentences said one by one and laid on a timeline with pauses of 0.25-1.2 s between
// them, in four voices (slt, rms, awb, kal), clean and with a tonal music bed (three sines under a slow envelope) 10 dB
// under the speech; as 25 fps video with AAC sound. Through the built server over stdio: the known text is aligned
// (transcribe_asset with text), then compose_edit cuts every sentence by its word indices, and a run of words inside
// each sentence (no pause around it). Each cut is read back from its edit (in and out points, level windows) and
// judged by the true word times: clipped (the sound at full level starts after the first word's onset, or stops
// before the last word's end, by more than 5 ms) and dead air (sound heard before the onset and after the end).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUT_GAPS, CUT_SENTENCES } from '../test/fixtures/cut-sentences.mjs';
import { connect } from './lib.mjs';
import { concatSound, ffmpeg, pcm16, silence } from './media.mjs';

/** More of a neighbour word's sound than this (s) at a cut is a fragment an editor hears (issue 46, item 1). */
const FRAGMENT = 0.03;
const VOICES = (process.env.BENCH_VOICES ?? 'slt,rms,awb,kal').split(',');
const BEDS = (process.env.BENCH_BEDS ?? 'clean,10').split(',');
const FPS = 25;
const TOLERANCE = 0.005;
const SENTENCES = CUT_SENTENCES;
const GAPS = CUT_GAPS;

function exec(cmd, args) {
  const r = spawnSync(cmd, args, { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}
const flite = (args) => exec('flite', args).toString();
const spokenWords = (text) => text.split(/[^A-Za-z']+/).filter(Boolean);

/** flite says `text` into `wav`; every word with its true start and end (s), from flite's own phone segments. */
function sayWithWordTimes(text, wav, voice) {
  const segments = flite(['-voice', voice, '-t', text, '-o', wav, '-psdur'])
    .trim()
    .split(/\s+/)
    .map((s) => ({ phone: s.slice(0, s.lastIndexOf(':')), end: Number(s.slice(s.lastIndexOf(':') + 1)) }));
  const out = [];
  let k = 0;
  let prevEnd = 0;
  for (const word of spokenWords(text)) {
    const want = flite(['-voice', voice, '-t', word, 'none', '-ps'])
      .trim()
      .split(/\s+/)
      .filter((p) => p && p !== 'pau').length;
    while (k < segments.length && segments[k].phone === 'pau') prevEnd = segments[k++].end;
    if (segments.slice(k, k + want).some((s) => s.phone === 'pau') || k + want > segments.length)
      throw new Error(`"${word}" was said otherwise in context`);
    out.push({ word, start: prevEnd, end: segments[k + want - 1].end });
    prevEnd = segments[k + want - 1].end;
    k += want;
  }
  return out;
}

const rmsDb = (s, words) => {
  let sum = 0;
  let n = 0;
  for (const w of words)
    for (let i = Math.round(w.start * 16000); i < Math.min(s.length, Math.round(w.end * 16000)); i++) {
      sum += (s[i] / 32768) ** 2;
      n++;
    }
  return 10 * Math.log10(sum / n);
};

/** The sentences said in `voice`, with pauses, over a bed `bedDb` under the speech (or none), as video; true words. */
export function makeMedia(dir, voice, bed) {
  const words = [];
  const files = [];
  let t = 0.7;
  const lead = join(dir, 'lead.wav');
  silence(lead, 0.7);
  files.push(lead);
  SENTENCES.forEach((text, i) => {
    const wav = join(dir, `s${i}.wav`);
    const ws = sayWithWordTimes(text, wav, voice);
    // flite's own sample rate is 16 kHz for these voices (kal is 8 kHz): resample to 16 kHz before joining.
    const even = join(dir, `s${i}-16k.wav`);
    ffmpeg(['-i', wav, '-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', even]);
    const sec = Number(
      exec('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', even]).toString(),
    );
    for (const w of ws) words.push({ word: w.word, start: t + w.start, end: t + w.end, sentence: i });
    const gap = join(dir, `gap${i}.wav`);
    silence(gap, GAPS[i]);
    files.push(even, gap);
    t += sec + GAPS[i];
  });
  const speech = concatSound(files, join(dir, 'speech.wav'));
  let sound = speech;
  if (bed !== 'clean') {
    // Three sines (a minor chord) under a slow swell, at `bed` dB under the speech's RMS over its words.
    const speechDb = rmsDb(pcm16(speech), words);
    const chord = `sine=f=220:r=16000,volume=1[a];sine=f=261.6:r=16000[b];sine=f=329.6:r=16000[c];[a][b][c]amix=inputs=3:normalize=0,aeval='val(0)*(0.6+0.4*sin(2*PI*t/3))'`;
    const raw = join(dir, 'bed-raw.wav');
    ffmpeg(['-filter_complex', `${chord},atrim=0:${t.toFixed(3)}[o]`, '-map', '[o]', '-c:a', 'pcm_s16le', raw]);
    const bedDb = rmsDb(pcm16(raw), [{ start: 0, end: t }]);
    const gain = speechDb - Number(bed) - bedDb;
    sound = join(dir, 'mix.wav');
    ffmpeg([
      '-i',
      speech,
      '-i',
      raw,
      '-filter_complex',
      `[1:a]volume=${gain.toFixed(2)}dB[b];[0:a][b]amix=inputs=2:normalize=0:duration=first[o]`,
      '-map',
      '[o]',
      '-c:a',
      'pcm_s16le',
      sound,
    ]);
  }
  const video = join(dir, `talk-${voice}-${bed}.mp4`);
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `color=c=gray:s=160x90:r=${FPS}:d=${(t + 0.5).toFixed(3)}`,
    '-i',
    sound,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-af',
    'apad',
    '-shortest',
    video,
  ]);
  return { video, words };
}

const sec = (tc) => {
  const [h, m, s] = tc.split(':');
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
};

/**
 * What a cut plays, read from its edit: where its sound is heard at all (level above 0) and at full level, on the
 * source clock. The in point moves to the frame it means (the frame starting within 0.5 ms before it, else the next).
 */
export function heardSpan(seg) {
  let inSec = sec(seg.video_start_time);
  const k = Math.ceil((inSec - 0.0005 - 1e-6) * FPS);
  inSec = Math.max(inSec, k / FPS);
  const outSec = sec(seg.video_end_time);
  const windows = seg.audio_levels.map((l) => ({ level: l.audio_level, from: sec(l.start_time), to: sec(l.end_time) }));
  const levelAt = (x) => windows.find((w) => x >= w.from && x < w.to)?.level ?? 1;
  // Walk the cut in 1 ms steps: the first and last instants heard, and at full level (the cut's own volume).
  let heard;
  let full;
  const top = Math.max(...[1, ...windows.map((w) => w.level)].filter((l) => l > 0 && l <= 1));
  const ref = windows.length ? Math.max(...windows.map((w) => w.level)) : top;
  for (let x = inSec; x < outSec - 1e-9; x += 0.001) {
    const l = levelAt(x + 1e-6);
    if (l > 0) heard = heard ? { from: heard.from, to: x + 0.001 } : { from: x, to: x + 0.001 };
    if (l >= ref - 1e-9) full = full ? { from: full.from, to: x + 0.001 } : { from: x, to: x + 0.001 };
  }
  return { inSec, outSec, heard, full };
}

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-cut-'));
  const handle = 0.15;
  const rows = [];
  try {
    for (const voice of VOICES) {
      for (const bed of BEDS) {
        const dir = join(root, `${voice}-${bed}`);
        mkdirSync(dir);
        const { video, words } = makeMedia(dir, voice, bed);
        const { client } = await connect({
          CUTROOM_DATA_DIR: join(dir, 'data'),
          CUTROOM_CACHE_DIR: join(dir, 'cache'),
          CUTROOM_ALLOWED_DIRS: dir,
          CUTROOM_LOG_LEVEL: 'error',
        });
        const call = async (name, args) => {
          const r = await client.callTool({ name, arguments: args }, { timeout: 600_000 });
          if (r.isError) throw new Error(`${name}: ${r.content[0].text}`);
          return r.structuredContent;
        };
        const project = (await call('create_project', { name: 'bench', description: 'cuts by words' })).project.id;
        const asset = (await call('import_media', { project_id: project, path: video })).asset.id;
        const tr = await call('transcribe_asset', {
          project_id: project,
          asset_id: asset,
          text: SENTENCES.join(' '),
          words: true,
        });
        const heardWords = tr.transcript?.words ?? tr.words ?? [];
        // Every sentence whole, and a run of words inside each (from its third word to three before its end).
        const spans = [];
        SENTENCES.forEach((_, i) => {
          const ids = words.flatMap((w, j) => (w.sentence === i ? [j] : []));
          spans.push({ kind: 'sentence', first: ids[0], last: ids.at(-1) });
          spans.push({ kind: 'inside', first: ids[2], last: ids.at(-4) });
        });
        // One compose per clip: a clip whose words were not heard is refused (a diagnostic), and counted as such.
        for (const s of spans) {
          const r = await client.callTool(
            {
              name: 'compose_edit',
              arguments: {
                project_id: project,
                resolution: '160x90',
                fps: FPS,
                clips: [{ asset_id: asset, words: [s.first, s.last] }],
              },
            },
            { timeout: 600_000 },
          );
          const c = r.structuredContent;
          if (!c?.ready) {
            if (!c?.diagnostics?.some((d) => d.message.startsWith('not heard')))
              throw new Error(`compose_edit: ${r.content[0].text.slice(0, 300)}`);
            rows.push({ voice, bed, kind: s.kind, refused: true });
            continue;
          }
          const edit = JSON.parse(
            (await client.readResource({ uri: `cutroom://edits/${c.edit_id}` })).contents[0].text,
          );
          const { inSec, outSec, heard, full } = heardSpan((edit.edit ?? edit).video_series_sequential[0]);
          const onset = words[s.first].start;
          const end = words[s.last].end;
          if (process.env.BENCH_DETAIL === '1') {
            // Per cut: true times of the neighbours and the cut's edges, the transcript's, and where the sound was cut.
            const f = (x) => (x === undefined ? '-' : x.toFixed(3));
            const tw = (i) => heardWords[i];
            console.log(
              `${voice} ${bed} ${s.kind} w${s.first}-${s.last} head: true prevEnd ${f(words[s.first - 1]?.end)} onset ${f(onset)} | transcript prevEnd ${f(tw(s.first - 1)?.end_seconds)} start ${f(tw(s.first)?.start_seconds)} | sound in ${f(heard.from)} full ${f(full.from)} (${Math.round((full.from - onset) * 1000)} ms)` +
                ` || tail: true end ${f(end)} nextStart ${f(words[s.last + 1]?.start)} | transcript end ${f(tw(s.last)?.end_seconds)} nextStart ${f(tw(s.last + 1)?.start_seconds)} | sound out ${f(heard.to)} full ${f(full.to)} (${Math.round((end - full.to) * 1000)} ms)`,
            );
          }
          rows.push({
            voice,
            bed,
            kind: s.kind,
            clippedHead: full.from - onset > TOLERANCE ? full.from - onset : 0,
            clippedTail: end - full.to > TOLERANCE ? end - full.to : 0,
            // Dead air: sound heard before the first word and after the last; the picture's muted margin beside it.
            airHead: Math.max(0, onset - heard.from),
            airTail: Math.max(0, heard.to - end),
            mutedHead: heard.from - inSec,
            mutedTail: outSec - heard.to,
            // A neighbour's fragment: sound heard while the word before the cut, or after it, is said (true times).
            fragHead: Math.max(0, Math.min(words[s.first - 1]?.end ?? -Infinity, onset) - heard.from),
            fragTail: Math.max(0, heard.to - Math.max(words[s.last + 1]?.start ?? Infinity, end)),
            runOnHead: !!words[s.first - 1] && onset - words[s.first - 1].end < 0.001,
            runOnTail: !!words[s.last + 1] && words[s.last + 1].start - end < 0.001,
          });
        }
        await client.close();
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const ms = (x) => `${Math.round(x * 1000)}`;
  const line = (label, all) => {
    const rs = all.filter((r) => !r.refused);
    const refused = all.length - rs.length;
    const head = rs.filter((r) => r.clippedHead > 0);
    const tail = rs.filter((r) => r.clippedTail > 0);
    const worst = (xs, k) => (xs.length ? ms(Math.max(...xs.map((r) => r[k]))) : '-');
    const air = (k) => ms(Math.max(...rs.map((r) => r[k])));
    const over = rs.filter((r) => r.airHead > handle + TOLERANCE || r.airTail > handle + TOLERANCE).length;
    const frags = rs.filter((r) => Math.max(r.fragHead, r.fragTail) > FRAGMENT);
    const worstFrag = frags.length ? ms(Math.max(...frags.map((r) => Math.max(r.fragHead, r.fragTail)))) : '-';
    // Edge by edge, where the cut's word runs into its neighbour (no true pause between them).
    const edges = rs
      .flatMap((r) => [...(r.runOnHead ? [r.fragHead] : []), ...(r.runOnTail ? [r.fragTail] : [])])
      .sort((x, y) => x - y);
    const edgeLine = edges.length
      ? ` | run-on edges ${edges.length}: neighbour median ${ms(edges[Math.floor(edges.length / 2)])} ms, <= ${FRAGMENT * 1000} ms ${edges.filter((f) => f <= FRAGMENT).length}, <= 45 ms ${edges.filter((f) => f <= 0.045).length}`
      : '';
    console.log(
      `${label.padEnd(24)} ${String(rs.length).padStart(2)} cut, ${refused} refused (not heard) | clipped head ${String(head.length).padStart(2)} (worst ${worst(head, 'clippedHead')} ms), tail ${String(tail.length).padStart(2)} (worst ${worst(tail, 'clippedTail')} ms)` +
        ` | dead air max head ${air('airHead')} ms, tail ${air('airTail')} ms, ${over} over the handle | muted picture max ${air('mutedHead')}/${air('mutedTail')} ms` +
        ` | neighbour over ${FRAGMENT * 1000} ms ${frags.length} (worst ${worstFrag} ms)${edgeLine}`,
    );
  };
  console.log(
    `clips cut by words (aligned text), ${FPS} fps source, handle ${handle * 1000} ms, tolerance ${TOLERANCE * 1000} ms`,
  );
  for (const voice of VOICES)
    for (const bed of BEDS)
      for (const kind of ['sentence', 'inside'])
        line(
          `${voice} ${bed === 'clean' ? 'clean' : `bed -${bed} dB`} ${kind}`,
          rows.filter((r) => r.voice === voice && r.bed === bed && r.kind === kind),
        );
  for (const kind of ['sentence', 'inside'])
    line(
      `all ${kind}`,
      rows.filter((r) => r.kind === kind),
    );
}
