// Issue 46, item 7: the editor's scorecard. Edits are made and previewed through the built server over stdio from
// speech whose true word times are known (flite, four voices, the sentences of bench/cut-words.mjs, clean and under a
// chord bed 10 and 20 dB down) and from real read speech (Debian's pocketsphinx-testdata: five LibriVox recordings
// with their transcripts), and the sound an editor would hear is counted:
// - clipped words: a cut by words whose first word starts, or last word ends, outside its full-level sound (> 5 ms);
// - neighbour fragments: a neighbour word's sound heard at a cut for over 30 ms (true times);
// - stutters: a sentence split over two consecutive clips by words that plays a word twice (over 30 ms of it);
// - holes: runs over 5 ms below -90 dBFS in the preview's sound where the sources have sound (under a bed, and in
//   the real recordings' room tone; the clean synthetic pauses are digital silence themselves);
// - clicks: a sample step over 3x the 99th percentile of the preview's steps in its speech, where the source's sound
//   at that place (the preview's cuts map it back, +-2 ms) steps by under a third of that: a step the edit made, not
//   the voice's own (rms's buzzy pulses step that far in the recording itself; they are counted apart, as "voice");
// - true peaks over the ceiling (-1 dBTP), by ffmpeg's ebur128;
// - fillers missed and speech removed by tighten_edit on speech with "uh" and "um" said between pauses, clean and under
//   the same bed, transcribed by recognition alone (the fillers are written as other words).
// - pumping: a music bed (a 55 Hz tone, under the voice's lowest harmonic) ducked under slt reading sentences apart by
//   0.7-1.4 s pauses and one of 2.5 s, previewed; the bed's level in the short pauses and in the 40 ms before each
//   onset against its level under speech, and in the long pause (it comes back), with and without a transcript.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CUT_SENTENCES } from '../test/fixtures/cut-sentences.mjs';
import { heardSpan, makeMedia } from './cut-words.mjs';
import { connect } from './lib.mjs';
import { concatSound } from './media.mjs';

const VOICES = (process.env.BENCH_VOICES ?? 'slt,rms,awb,kal').split(',');
const BEDS = (process.env.BENCH_BEDS ?? 'clean,10,20').split(',');
/** Which cards to run: cuts (with the voices' run-on edges), fillers, pumping, librivox. */
const CARDS = new Set((process.env.BENCH_CARDS ?? 'cuts,fillers,pumping,librivox').split(','));
const FPS = 25;
const RATE = 48_000;
const TOLERANCE = 0.005;
const FRAGMENT = 0.03;
const HOLE_S = 0.005;
const HOLE_LEVEL = 10 ** (-90 / 20);
const CEILING_DBTP = -1;
const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';

function exec(cmd, args) {
  const r = spawnSync(cmd, args, { maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr?.toString() || r.error}`);
  return r;
}
const sound = (file, rate = RATE) => {
  const b = exec('ffmpeg', [
    '-v',
    'error',
    '-i',
    file,
    '-map',
    '0:a:0',
    '-ac',
    '1',
    '-ar',
    String(rate),
    '-f',
    'f32le',
    '-',
  ]).stdout;
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + (b.length & ~3)));
};
const sec = (tc) => {
  const [h, m, s] = tc.split(':');
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
};

/** Runs over HOLE_S below -90 dBFS in `s`, not counting its first and last 50 ms (the edit's own fades). */
function holes(s) {
  let n = 0;
  let run = 0;
  const edge = Math.round(0.05 * RATE);
  for (let i = edge; i < s.length - edge; i++) {
    if (Math.abs(s[i]) < HOLE_LEVEL) run++;
    else {
      if (run > HOLE_S * RATE) n++;
      run = 0;
    }
  }
  return n;
}
/**
 * The 99th percentile of the sample steps where `s` is speech-loud (within 30 dB of its peak): the preview's own, so
 * its levelling's gain does not count as clicks.
 */
function speechStep(s) {
  const peak = s.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
  const loud = peak * 10 ** (-30 / 20);
  const steps = [];
  for (let i = 1; i < s.length; i++) if (Math.abs(s[i]) > loud) steps.push(Math.abs(s[i] - s[i - 1]));
  steps.sort((a, b) => a - b);
  return steps[Math.floor(steps.length * 0.99)] ?? 0;
}
/**
 * Steps over `limit` in a preview's sound `s`: those the edit made (the source's sound at the same place, through
 * the preview's cuts, steps by under a third of the limit within 2 ms) and those the source has itself (voice).
 */
function clicks(s, limit, cuts, source) {
  const near = Math.round(0.002 * RATE);
  let made = 0;
  let voice = 0;
  for (let i = 1; i < s.length; i++) {
    if (Math.abs(s[i] - s[i - 1]) <= limit) continue;
    const t = i / RATE;
    const cut = cuts.find((c) => t >= sec(c.timeline_start) && t < sec(c.timeline_end));
    const at = cut ? Math.round((sec(cut.source_in) + t - sec(cut.timeline_start)) * RATE) : -1;
    let own = 0;
    for (let j = Math.max(1, at - near); at >= 0 && j <= Math.min(source.length - 1, at + near); j++)
      own = Math.max(own, Math.abs(source[j] - source[j - 1]));
    if (own >= limit / 3) voice++;
    else made++;
  }
  return { made, voice };
}
function truePeak(file) {
  const r = exec('ffmpeg', [
    '-hide_banner',
    '-nostats',
    '-i',
    file,
    '-map',
    '0:a:0',
    '-af',
    'ebur128=peak=true',
    '-f',
    'null',
    '-',
  ]);
  const m = /True peak:\s*Peak:\s*(-?[\d.]+|-inf)/s.exec(r.stderr.toString());
  return m ? Number(m[1]) : -Infinity;
}

/**
 * Clipped words and neighbour fragments of one cut by words [first, last], by the true times; and at each edge where
 * its word runs into the neighbour (no true pause), the neighbour's sound heard there (s).
 */
function judgeCut(seg, words, first, last) {
  const { heard, full } = heardSpan(seg);
  const onset = words[first].start;
  const end = words[last].end;
  const prev = words[first - 1];
  const next = words[last + 1];
  const runOn = [
    ...(prev && prev.sentence === words[first].sentence && onset - prev.end < 0.001
      ? [Math.max(0, prev.end - heard.from)]
      : []),
    ...(next && next.sentence === words[last].sentence && next.start - end < 0.001
      ? [Math.max(0, heard.to - next.start)]
      : []),
  ];
  return {
    runOn,
    clipped: (full.from - onset > TOLERANCE ? 1 : 0) + (end - full.to > TOLERANCE ? 1 : 0),
    fragments:
      (Math.min(words[first - 1]?.end ?? -Infinity, onset) - heard.from > FRAGMENT ? 1 : 0) +
      (heard.to - Math.max(words[last + 1]?.start ?? Infinity, end) > FRAGMENT ? 1 : 0),
  };
}

async function server(dir) {
  const { client } = await connect({
    CUTROOM_DATA_DIR: join(dir, 'data'),
    CUTROOM_CACHE_DIR: join(dir, 'cache'),
    CUTROOM_ALLOWED_DIRS: dir,
    CUTROOM_LOG_LEVEL: 'error',
    CUTROOM_RENDER_WAIT_MS: '55000',
  });
  const call = async (name, args) => {
    const r = await client.callTool({ name, arguments: args }, { timeout: 900_000 });
    if (r.isError) throw new Error(`${name}: ${r.content[0].text.slice(0, 400)}`);
    return { s: r.structuredContent, text: r.content.map((c) => c.text ?? '').join('\n') };
  };
  return { client, call };
}
const readEdit = async (client, id) => {
  const e = JSON.parse((await client.readResource({ uri: `cutroom://edits/${id}` })).contents[0].text);
  return (e.edit ?? e).video_series_sequential;
};

/**
 * Cuts by words (every other sentence whole, a run inside each other one) and a sentence split over two clips, from
 * `video` whose true words are `words` (each with its `sentence`), previewed; the card's counts.
 */
async function cutsCard(dir, video, words, text) {
  const { client, call } = await server(dir);
  try {
    const project = (await call('create_project', { name: 'card', description: 'scorecard' })).s.project.id;
    const asset = (await call('import_media', { project_id: project, path: video })).s.asset.id;
    await call('transcribe_asset', { project_id: project, asset_id: asset, text, words: true });
    const sentences = [...new Set(words.map((w) => w.sentence))];
    const ids = (i) => words.flatMap((w, j) => (w.sentence === i ? [j] : []));
    const spans = sentences.map((i) =>
      i % 2 === 0 || ids(i).length < 7 ? [ids(i)[0], ids(i).at(-1)] : [ids(i)[2], ids(i).at(-4)],
    );
    // And cuts whose edges run into a sibilant (the sound marks the join): "shore before the|sun", "a|ship in
    // the|storm", "We|sailed ...", "the|small boat ...", "the|square ...". (Sentences of bench/cut-words.mjs.)
    if (text === CUT_SENTENCES.join(' '))
      spans.push(
        [ids(0)[6], ids(0)[8]],
        [ids(1)[3], ids(1)[5]],
        [ids(2)[1], ids(2).at(-1)],
        [ids(4)[4], ids(4).at(-1)],
        [ids(7)[6], ids(7).at(-1)],
      );
    const card = {
      cuts: 0,
      refused: 0,
      clipped: 0,
      fragments: 0,
      stutters: 0,
      holes: 0,
      clicks: 0,
      overPeak: 0,
      runOn: [],
      runOnCuts: 0,
      runOnWithin: 0,
    };
    const clips = [];
    for (const [first, last] of spans) {
      // Each cut alone first: a cut refused as not heard is counted, not joined.
      const r = await client.callTool(
        {
          name: 'compose_edit',
          arguments: {
            project_id: project,
            resolution: '160x90',
            fps: FPS,
            clips: [{ asset_id: asset, words: [first, last] }],
          },
        },
        { timeout: 900_000 },
      );
      if (!r.structuredContent?.ready) {
        card.refused++;
        if (process.env.BENCH_DETAIL === '1') {
          const why = r.structuredContent?.diagnostics?.map((d) => d.message).join('; ') ?? r.content?.[0]?.text;
          console.error(
            `refused w${first}-${last} "${words[first].word}...${words[last].word}" (true ${words[first].start.toFixed(3)}-${words[last].end.toFixed(3)}): ${String(why).slice(0, 400)}`,
          );
        }
        continue;
      }
      const [seg] = await readEdit(client, r.structuredContent.edit_id);
      const j = judgeCut(seg, words, first, last);
      if (process.env.BENCH_DETAIL === '1' && j.runOn.length)
        console.error(`run-on w${first}-${last}: ${j.runOn.map((f) => Math.round(f * 1000)).join(', ')} ms`);
      if (process.env.BENCH_DETAIL === '1' && j.clipped) {
        // Which word, by how much, and where the cut's sound is at full level against the true times.
        const { heard, full } = heardSpan(seg);
        const f = (x) => x?.toFixed(3) ?? '-';
        console.error(
          `clipped w${first}-${last} "${words[first].word}...${words[last].word}": true ${f(words[first].start)}-${f(words[last].end)} (prev end ${f(words[first - 1]?.end)}, next start ${f(words[last + 1]?.start)}) | heard ${f(heard.from)}-${f(heard.to)}, full ${f(full.from)}-${f(full.to)}`,
        );
      }
      card.cuts++;
      card.clipped += j.clipped;
      card.fragments += j.fragments;
      if (j.runOn.length) {
        card.runOn.push(...j.runOn);
        card.runOnCuts++;
        if (j.runOn.every((f) => f <= FRAGMENT)) card.runOnWithin++;
      }
      clips.push({ asset_id: asset, words: [first, last] });
    }
    // A sentence split in the middle over two consecutive clips.
    const halves = ids(sentences[1]);
    const mid = halves[Math.floor(halves.length / 2)];
    const split = await call('compose_edit', {
      project_id: project,
      clips: [
        { asset_id: asset, words: [halves[0], mid] },
        { asset_id: asset, words: [mid + 1, halves.at(-1)] },
      ],
    });
    if (split.s.ready) {
      const segs = await readEdit(client, split.s.edit_id);
      const ranges = segs.map((s) => [sec(s.video_start_time), sec(s.video_end_time)]);
      for (const w of words) {
        const plays = ranges.filter(([a, b]) => Math.min(b, w.end) - Math.max(a, w.start) > FRAGMENT).length;
        if (plays > 1) card.stutters++;
      }
    } else card.refused++;
    // The cuts by words joined, previewed: the sound an editor hears.
    if (clips.length) {
      const p = await call('preview_edit', { project_id: project, resolution: '160x90', fps: FPS, clips });
      const out = sound(p.s.path);
      card.holes = holes(out);
      const c = clicks(out, 3 * speechStep(out), p.s.cuts, sound(video));
      card.clicks = c.made;
      card.voiceSteps = c.voice;
      card.overPeak = truePeak(p.s.path) > CEILING_DBTP ? 1 : 0;
    }
    return card;
  } finally {
    await client.close();
  }
}

/**
 * Parts said with pauses, "uh" and "um" among them (true times), as video, clean or under the chord bed `bed` dB
 * under the speech (as cut-words lays it); then recognition, a cut, tighten_edit.
 */
export async function fillersCard(dir, voice, bed) {
  const parts = [
    ['we are so happy', 0.3],
    ['uh', 0.3],
    ['to see you all here tonight', 0.4],
    ['um', 0.3],
    ['the lamp turned slowly over the water', 0.4],
    ['um', 0.3],
    ['and the bell rang three times', 0.5],
  ];
  const truth = [];
  const files = [];
  let at = 0;
  parts.forEach(([text, pause], i) => {
    const wav = join(dir, `f${i}.wav`);
    const ps = exec('flite', ['-voice', voice, '-t', text, '-o', wav, '-psdur'])
      .stdout.toString()
      .trim()
      .split(/\s+/)
      .map((s) => ({ phone: s.slice(0, s.lastIndexOf(':')), end: Number(s.slice(s.lastIndexOf(':') + 1)) }));
    const first = ps.findIndex((s) => s.phone !== 'pau');
    const last = ps.findLastIndex((s) => s.phone !== 'pau');
    // A part's true span: its first phone's start to its last's end (its words run together inside).
    truth.push({ text, start: at + ps[first - 1].end, end: at + ps[last].end });
    const padded = join(dir, `fp${i}.wav`);
    exec('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      wav,
      '-af',
      `apad=pad_len=${Math.round(pause * 16000)}`,
      '-ar',
      '16000',
      '-ac',
      '1',
      padded,
    ]);
    at +=
      Number(
        exec('ffprobe', [
          '-v',
          'error',
          '-show_entries',
          'stream=duration_ts',
          '-of',
          'csv=p=0',
          padded,
        ]).stdout.toString(),
      ) / 16000;
    files.push(padded);
  });
  const wav = concatSound(files, join(dir, 'fillers.wav'));
  const video = join(dir, 'fillers.mov');
  const mixed = join(dir, 'fillers-bed.wav');
  if (bed !== 'clean') {
    // The chord (three unit sines under a swell 0.6 +- 0.4: RMS 10 log10(1.5 * 0.44) dB) at `bed` dB under the speech.
    const s = sound(wav, 16000);
    let sum = 0;
    let n = 0;
    for (const p of truth)
      for (let i = Math.round(p.start * 16000); i < Math.min(s.length, Math.round(p.end * 16000)); i++) {
        sum += s[i] ** 2;
        n++;
      }
    const gain = 10 * Math.log10(sum / n) - Number(bed) - 10 * Math.log10(1.5 * 0.44);
    exec('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      wav,
      '-filter_complex',
      `sine=f=220:r=16000[a];sine=f=261.6:r=16000[b];sine=f=329.6:r=16000[c];[a][b][c]amix=inputs=3:normalize=0,aeval='val(0)*(0.6+0.4*sin(2*PI*t/3))',volume=${gain.toFixed(2)}dB[bed];[0:a][bed]amix=inputs=2:normalize=0:duration=first[o]`,
      '-map',
      '[o]',
      '-c:a',
      'pcm_s16le',
      mixed,
    ]);
  }
  exec('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `color=c=gray:s=160x90:r=${FPS}:d=${at}`,
    '-i',
    bed === 'clean' ? wav : mixed,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'pcm_s16le',
    '-shortest',
    video,
  ]);
  const { client, call } = await server(dir);
  try {
    const project = (await call('create_project', { name: 'fillers', description: 'scorecard' })).s.project.id;
    const asset = (await call('import_media', { project_id: project, path: video })).s.asset.id;
    const t = (await call('transcribe_asset', { project_id: project, asset_id: asset, words: true })).s;
    const c = await call('compose_edit', {
      project_id: project,
      clips: [{ asset_id: asset, words: [0, t.words.length - 1] }],
    });
    const tight = await call('tighten_edit', { edit_id: c.s.edit_id });
    const cuts = (await readEdit(client, tight.s.edit_id)).map((s) => [sec(s.video_start_time), sec(s.video_end_time)]);
    const kept = (p) => cuts.reduce((a, [x, y]) => a + Math.max(0, Math.min(y, p.end) - Math.max(x, p.start)), 0);
    const fillers = truth.filter((p) => p.text === 'uh' || p.text === 'um');
    return {
      fillers: fillers.length,
      missed: fillers.filter((p) => kept(p) > TOLERANCE).length,
      removedSpeech: truth
        .filter((p) => !fillers.includes(p))
        .reduce((a, p) => a + Math.max(0, p.end - p.start - kept(p)), 0),
      // Why a filler was missed: what recognition wrote, what tighten_edit found and cut (not printed by run()).
      detail: {
        truth,
        words: t.words,
        text: tight.text,
        removals: tight.s.removals,
        cuts,
        video,
        silences: (await call('inspect_asset', { project_id: project, asset_id: asset })).s.silences,
      },
    };
  } finally {
    await client.close();
  }
}

/** The level (dB) of the `f` Hz component of `x` (at `rate`) over [from, to] s, by Goertzel. */
function toneDb(x, f, from, to, rate = RATE) {
  const a = Math.round(from * rate);
  const b = Math.round(to * rate);
  const coeff = 2 * Math.cos((2 * Math.PI * f) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = a; i < b; i++) {
    const s0 = x[i] + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return 10 * Math.log10((s1 * s1 + s2 * s2 - coeff * s1 * s2) / (b - a) ** 2 + 1e-20);
}

/** The pauses between sentences (s) of the pumping card: under the hold (1.5 s), then one well over it. */
const PUMP_GAPS = [0.7, 1.0, 1.3, 0.9, 2.5];
/** The bed of the pumping card: a tone under the voice's lowest harmonic, so its band is the bed's alone. */
const BED_HZ = 55;

/**
 * A ducked bed over a voiceover whose sentences are apart by PUMP_GAPS (slt, true spans from flite's segments),
 * previewed: the bed's level in each pause under the hold minus its level under speech (pumping, dB; the worst),
 * in the long pause (it should come back), and in the 40 ms before each sentence's onset (a late duck shows here).
 */
export async function pumpingCard(dir) {
  const spans = [];
  const files = [];
  let at = 0.8;
  const lead = join(dir, 'p-lead.wav');
  exec('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono', '-t', '0.8', lead]);
  files.push(lead);
  CUT_SENTENCES.slice(0, PUMP_GAPS.length + 1).forEach((text, i) => {
    const wav = join(dir, `p${i}.wav`);
    const ps = exec('flite', ['-voice', 'slt', '-t', text, '-o', wav, '-psdur'])
      .stdout.toString()
      .trim()
      .split(/\s+/)
      .map((x) => ({ phone: x.slice(0, x.lastIndexOf(':')), end: Number(x.slice(x.lastIndexOf(':') + 1)) }));
    const first = ps.findIndex((x) => x.phone !== 'pau');
    const last = ps.findLastIndex((x) => x.phone !== 'pau');
    const seconds = ps.at(-1).end;
    const pause = PUMP_GAPS[i] ?? 1;
    // The pause heard between sentences: flite's own trailing and leading silence counted in.
    const trail = seconds - ps[last].end;
    spans.push({ start: at + ps[first - 1].end, end: at + ps[last].end });
    const padded = join(dir, `pp${i}.wav`);
    const next = i < PUMP_GAPS.length ? Math.max(0, pause - trail - 0.1) : 0.8;
    exec('ffmpeg', ['-v', 'error', '-y', '-i', wav, '-af', `aresample=16000,apad=pad_dur=${next}`, padded]);
    files.push(padded);
    at += seconds + next;
  });
  writeFileSync(join(dir, 'p.txt'), files.map((f) => `file '${f}'`).join('\n'));
  const wav = join(dir, 'p.wav');
  exec('ffmpeg', ['-v', 'error', '-y', '-f', 'concat', '-safe', '0', '-i', join(dir, 'p.txt'), '-ar', '16000', wav]);
  // Twice (another encoding, so another asset): one transcribed (the duck follows its words), one not (heard).
  const videos = ['30', '31'].map((crf) => {
    const video = join(dir, `p${crf}.mov`);
    exec('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `color=c=gray:s=160x90:r=${FPS}:d=${at}`, '-i', wav],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', crf, '-c:a', 'pcm_s16le', '-shortest', video],
    ]);
    return video;
  });
  const bed = join(dir, 'p-bed.wav');
  exec('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=f=${BED_HZ}:r=${RATE}:d=${at + 1}`, bed]);
  const { client, call } = await server(dir);
  try {
    const project = (await call('create_project', { name: 'pump', description: 'scorecard' })).s.project.id;
    const music = (await call('import_media', { project_id: project, path: bed })).s.asset.id;
    const measure = async (video, text) => {
      const asset = (await call('import_media', { project_id: project, path: video })).s.asset.id;
      if (text) await call('transcribe_asset', { project_id: project, asset_id: asset, text, words: true });
      const p = await call('preview_edit', {
        project_id: project,
        resolution: '160x90',
        fps: FPS,
        clips: [{ asset_id: asset, start: 0, end: Number(at.toFixed(3)) }],
        overlays: [{ asset_id: music, at: 0, role: 'music' }],
      });
      const out = sound(p.s.path);
      // Under speech: each sentence's middle, away from its edges.
      const under = Math.max(...spans.map((q) => toneDb(out, BED_HZ, q.start + 0.2, q.end - 0.2)));
      const pauses = spans.slice(1).map((q, i) => ({ from: spans[i].end, to: q.start }));
      const short = pauses.filter((q) => q.to - q.from < 1.5);
      const long = pauses.filter((q) => q.to - q.from >= 1.5);
      return {
        pumping: Math.max(...short.map((q) => toneDb(out, BED_HZ, q.from + 0.05, q.to - 0.05) - under)),
        back: Math.min(...long.map((q) => toneDb(out, BED_HZ, q.from + 0.8, q.to - 0.2) - under)),
        onset: Math.max(...spans.map((q) => toneDb(out, BED_HZ, q.start - 0.04, q.start) - under)),
        voiceOwn: toneDb(sound(video), BED_HZ, spans[0].start, spans.at(-1).end) - under,
        pauses: short.map((q) => (q.to - q.from).toFixed(2)),
      };
    };
    return {
      transcribed: await measure(videos[0], CUT_SENTENCES.slice(0, PUMP_GAPS.length + 1).join(' ')),
      heard: await measure(videos[1]),
    };
  } finally {
    await client.close();
  }
}

/** The LibriVox recordings joined with 0.4 s of their own room tone between them; words placed by the aligner. */
function librivoxMedia(dir) {
  const lines = readFileSync(join(LIBRIVOX, 'transcription'), 'utf8').trim().split('\n');
  const texts = lines.map((l) =>
    l
      .replace(/<\/?s>/g, '')
      .replace(/\(.*\)/, '')
      .trim(),
  );
  const names = lines.map((l) => /\(([^)]+)\)/.exec(l)[1]);
  const list = names.map((n) => `file '${join(LIBRIVOX, `${n}.wav`)}'`);
  writeFileSync(join(dir, 'lv.txt'), list.join('\n'));
  const wav = join(dir, 'lv.wav');
  exec('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'concat',
    '-safe',
    '0',
    '-i',
    join(dir, 'lv.txt'),
    '-ar',
    '16000',
    '-ac',
    '1',
    '-c:a',
    'pcm_s16le',
    wav,
  ]);
  const seconds = Number(
    exec('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'csv=p=0', wav]).stdout.toString(),
  );
  const video = join(dir, 'lv.mp4');
  exec('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `color=c=gray:s=160x90:r=${FPS}:d=${seconds}`,
    '-i',
    wav,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-b:a',
    '128k',
    '-shortest',
    video,
  ]);
  return { video, texts };
}

/** Real speech: each recording's sentence cut by words; holes, clicks and peaks in the preview (no true word times). */
async function librivoxCard(dir) {
  const { video, texts } = librivoxMedia(dir);
  const { client, call } = await server(dir);
  try {
    const project = (await call('create_project', { name: 'lv', description: 'scorecard' })).s.project.id;
    const asset = (await call('import_media', { project_id: project, path: video })).s.asset.id;
    await call('transcribe_asset', { project_id: project, asset_id: asset, text: texts.join(' '), words: true });
    let k = 0;
    const clips = texts.map((s) => {
      const n = s.split(/\s+/).length;
      const c = { asset_id: asset, words: [k, k + n - 1] };
      k += n;
      return c;
    });
    let refused = 0;
    const ok = [];
    for (const c of clips) {
      const r = await client.callTool(
        { name: 'compose_edit', arguments: { project_id: project, clips: [c] } },
        { timeout: 900_000 },
      );
      if (r.structuredContent?.ready) ok.push(c);
      else refused++;
    }
    const p = await call('preview_edit', { project_id: project, resolution: '160x90', fps: FPS, clips: ok });
    const out = sound(p.s.path);
    return {
      cuts: ok.length,
      refused,
      holes: holes(out),
      ...(({ made, voice }) => ({ clicks: made, voiceSteps: voice }))(
        clicks(out, 3 * speechStep(out), p.s.cuts, sound(video)),
      ),
      overPeak: truePeak(p.s.path) > CEILING_DBTP ? 1 : 0,
    };
  } finally {
    await client.close();
  }
}

export async function run() {
  const root = mkdtempSync(join(tmpdir(), 'cutroom-bench-card-'));
  const ms = (x) => Math.round(x * 1000);
  const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
  const runOnCol = (c) =>
    c.runOn?.length
      ? `${ms(median(c.runOn))} / ${ms(Math.max(...c.runOn))} ms, ${c.runOnWithin} of ${c.runOnCuts}`
      : '-';
  const row = (label, c) =>
    console.log(
      `| ${label} | ${c.cuts ?? '-'} (${c.refused ?? 0} refused) | ${c.clipped ?? '-'} | ${c.fragments ?? '-'} | ${runOnCol(c)} | ${c.stutters ?? '-'} | ${c.holes ?? '-'} | ${c.clicks ?? '-'} (${c.voiceSteps ?? '-'}) | ${c.overPeak ?? '-'} | ${c.missed !== undefined ? `${c.missed} of ${c.fillers}` : '-'} | ${c.removedSpeech !== undefined ? `${Math.round(c.removedSpeech * 1000)} ms` : '-'} |`,
    );
  const total = { runOn: [], runOnCuts: 0, runOnWithin: 0, clipped: 0, cuts: 0 };
  try {
    console.log(
      '| source | cuts by words | clipped words | neighbour > 30 ms | run-on edges: neighbour median / max, cuts <= 30 ms at both | stutters | holes | clicks (steps the voice has itself) | true peak > -1 dBTP | fillers missed | speech removed |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const voice of VOICES) {
      for (const bed of BEDS) {
        const dir = join(root, `${voice}-${bed}`);
        mkdirSync(dir);
        const { video, words } = makeMedia(dir, voice, bed);
        const card = CARDS.has('cuts') ? await cutsCard(dir, video, words, CUT_SENTENCES.join(' ')) : {};
        // Holes count only where the sources have sound: under a bed (the clean pauses are digital silence).
        if (bed === 'clean') card.holes = undefined;
        if (CARDS.has('fillers')) Object.assign(card, await fillersCard(dir, voice, bed));
        row(`${voice} ${bed === 'clean' ? 'clean' : `bed -${bed} dB`}`, card);
        if (card.runOn) {
          total.runOn.push(...card.runOn);
          for (const k of ['runOnCuts', 'runOnWithin', 'clipped', 'cuts']) total[k] += card[k];
        }
      }
    }
    if (total.runOn.length)
      console.log(
        `all voices: ${total.cuts} cuts, ${total.clipped} clipped words; run-on edges ${total.runOn.length}: neighbour median ${ms(median(total.runOn))} ms, max ${ms(Math.max(...total.runOn))} ms, ${total.runOn.filter((f) => f <= 0.03).length} edges <= 30 ms; cuts <= 30 ms at both edges ${total.runOnWithin} of ${total.runOnCuts}`,
      );
    if (CARDS.has('pumping')) {
      const dir = join(root, 'pumping');
      mkdirSync(dir);
      const card = await pumpingCard(dir);
      for (const [how, c] of Object.entries(card))
        console.log(
          `pumping (slt, ducked bed, duck ${how === 'heard' ? 'heard in the sound' : 'by the transcript'}): pauses ${c.pauses.join(', ')} s, bed ${c.pumping.toFixed(1)} dB over its level under speech at worst; ${c.back.toFixed(1)} dB over it in the 2.5 s pause; ${c.onset.toFixed(1)} dB over it in the 40 ms before onsets (the voice's own at ${BED_HZ} Hz: ${c.voiceOwn.toFixed(0)} dB)`,
        );
    }
    if (!CARDS.has('librivox')) {
      // not asked for
    } else if (readdirSync(LIBRIVOX).some((f) => f.endsWith('.wav'))) {
      const dir = join(root, 'librivox');
      mkdirSync(dir);
      row('LibriVox (5 recordings, no true times)', await librivoxCard(dir));
    } else console.log('LibriVox recordings not found (apt-get install pocketsphinx-testdata)');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
