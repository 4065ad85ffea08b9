// Levels in dB, fades of any length, overlays from any point (issue 33, item 1), through the built server over stdio
// with media made here by ffmpeg: a video whose sound is a steady 1 kHz tone, and an audio of two tones (440 Hz for
// its first 2 s, 1320 Hz for the next 2 s). The preview's sound is read back and measured: a cut's gain in dB, a fade's
// half-sine shape, which tone an overlay plays. On the service backend, what its edit format can carry (a gain under
// 0 dB, as levels) reaches create-edit and the rest is said in warnings.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeService } from '../fixtures/service.mjs';
import { spawnServer, storedEdit, type Spawned } from '../helpers/harness.js';
import { localProject, structuredOf, testRoot, type LocalProject } from '../helpers/local-project.js';
import { ffmpeg, soundOf } from '../helpers/sound.js';

const { root, allowed } = testRoot('mix');
const RATE = 48_000;
type Result = { isError?: boolean; structuredContent?: unknown };

const rms = (x: Float32Array, from: number, to: number) => {
  let s = 0;
  const a = Math.round(from * RATE);
  const b = Math.round(to * RATE);
  for (let i = a; i < b; i++) s += x[i]! ** 2;
  return Math.sqrt(s / Math.max(1, b - a));
};
const db = (x: number, ref: number) => 20 * Math.log10(x / ref);
/** The tone's frequency over [from, to): upward zero crossings per second. */
const frequency = (x: Float32Array, from: number, to: number) => {
  let n = 0;
  for (let i = Math.round(from * RATE) + 1; i < Math.round(to * RATE); i++) if (x[i - 1]! < 0 && x[i]! >= 0) n++;
  return n / (to - from);
};

let server: Spawned;
let projectId: string;
let tone: string;
let tones: string;
let tonesFile: string;
let call: LocalProject['call'];
let importMedia: LocalProject['importMedia'];

function makeMedia(dir: string): { video: string; audio: string } {
  const video = join(dir, 'tone.mp4');
  // (sine's amplitude is 1/8: the tone sits at -24 dBFS, room for any gain asked here.)
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    'color=c=gray:s=160x90:r=25:d=8',
    '-f',
    'lavfi',
    '-i',
    `sine=f=1000:r=${RATE}:d=8`,
    '-af',
    'volume=0.5',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-c:a',
    'aac',
    '-b:a',
    '192k',
    '-shortest',
    video,
  ]);
  const audio = join(dir, 'tones.wav');
  ffmpeg([
    '-f',
    'lavfi',
    '-i',
    `sine=f=440:r=${RATE}:d=2`,
    '-f',
    'lavfi',
    '-i',
    `sine=f=1320:r=${RATE}:d=2`,
    '-filter_complex',
    '[0:a][1:a]concat=n=2:v=0:a=1,volume=0.5[o]',
    '-map',
    '[o]',
    '-c:a',
    'pcm_s16le',
    audio,
  ]);
  return { video, audio };
}

beforeAll(async () => {
  const { video, audio } = makeMedia(allowed);
  tonesFile = audio;
  ({ server, projectId, call, importMedia } = await localProject(
    { root, allowed },
    { name: 'mix', description: 'levels in dB' },
  ));
  tone = await importMedia(video);
  tones = await importMedia(audio);
}, 120_000);
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('the mix on the local backend', () => {
  it('lowers a cut by its gain_db, and fades it in and out from and to silence along a half-sine', async () => {
    const p = structuredOf<{ path: string }>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        clips: [
          { asset_id: tone, start: 0, end: 2 },
          { asset_id: tone, start: 2, end: 4, gain_db: -6 },
          { asset_id: tone, start: 0, end: 3, fade_in: 1, fade_out: 1.2 },
          { asset_id: tone, start: 4, end: 6, gain_db: 4 },
        ],
      }),
    );
    const x = soundOf(p.path);
    const ref = rms(x, 0.2, 1.8);
    expect(ref).toBeGreaterThan(0.01);
    expect(db(rms(x, 2.2, 3.8), ref)).toBeCloseTo(-6, 0);
    // The third cut, at 4-7 s: in over its first second, out over its last 1.2 s. A half-sine is at half its
    // amplitude (-6 dB) halfway, near silence at its ends, and flat (full level) between the fades.
    expect(db(rms(x, 4.0, 4.05), ref)).toBeLessThan(-25);
    expect(db(rms(x, 4.45, 4.55), ref)).toBeCloseTo(-6, 0);
    expect(db(rms(x, 4.8, 4.9), ref)).toBeGreaterThan(-1.2);
    expect(db(rms(x, 5.1, 5.7), ref)).toBeCloseTo(0, 0);
    expect(db(rms(x, 6.35, 6.45), ref)).toBeCloseTo(-6, 0);
    expect(db(rms(x, 6.95, 7.0), ref)).toBeLessThan(-25);
    // A gain over 0 dB raises it.
    expect(db(rms(x, 7.2, 8.8), ref)).toBeCloseTo(4, 0);
  }, 180_000);

  it('plays an overlay from the point asked in its audio, with its gain and fades', async () => {
    const p = structuredOf<{ path: string }>(
      await call('preview_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        clips: [{ asset_id: tone, start: 0, end: 4, volume: 0 }],
        overlays: [{ asset_id: tones, at: 0.5, until: 2.5, from: 2, gain_db: -6, fade_out: 0.5 }],
      }),
    );
    const x = soundOf(p.path);
    expect(rms(x, 0, 0.45)).toBeLessThan(1e-3);
    // From 2 s in its audio: the 1320 Hz tone, not the 440 Hz one it begins with.
    expect(frequency(x, 0.6, 1.9)).toBeGreaterThan(1300);
    expect(frequency(x, 0.6, 1.9)).toBeLessThan(1340);
    // 6 dB under the 1320 Hz tone as the audio has it; halfway through the fade out, 6 dB under that.
    const ref = rms(soundOf(tonesFile), 2.2, 3.8);
    expect(db(rms(x, 0.6, 1.9), ref)).toBeCloseTo(-6, 0);
    expect(db(rms(x, 2.2, 2.3), ref)).toBeCloseTo(-12, 0);
    expect(rms(x, 2.55, 3.9)).toBeLessThan(1e-3);
  }, 180_000);

  it('a local render plays the same overlay from the same point (its input read past from)', async () => {
    const r = structuredOf<{ render: { done: boolean; url?: string } }>(
      await call('render_edit', {
        project_id: projectId,
        wait: true,
        edit: {
          video_output_resolution: '160x90',
          video_output_fps: 25,
          video_output_filename: 'from.mp4',
          video_series_sequential: [
            {
              video_id: tone,
              video_start_time: 0,
              video_end_time: 3,
              audio_levels: [{ audio_level: 0, start_time: 0, end_time: 3 }],
            },
          ],
          audio_overlay: [{ audio_id: tones, audio_start_time: 0.5, audio_end_time: 2.5, from: 2, gain_db: -6 }],
        },
      }),
    );
    expect(r.render.done).toBe(true);
    const x = soundOf(fileURLToPath(r.render.url!));
    expect(frequency(x, 0.6, 2.4)).toBeGreaterThan(1300);
    expect(frequency(x, 0.6, 2.4)).toBeLessThan(1340);
    expect(db(rms(x, 0.6, 2.4), rms(soundOf(tonesFile), 2.2, 3.8))).toBeCloseTo(-6, 0);
  }, 180_000);

  it('a default overlay length runs to what is left of its audio after from', async () => {
    const c = structuredOf<{ ready: boolean; summary: { overlays: { timeline_end: string }[] } }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [{ asset_id: tone, start: 0, end: 6 }],
        overlays: [{ asset_id: tones, at: 1, from: 2.5 }],
      }),
    );
    expect(c.ready).toBe(true);
    expect(c.summary.overlays[0]!.timeline_end).toBe('00:00:02.500');
  });

  it("exports and imports back an overlay's from in every format, gain and fades in OTIO, FCPXML (its volume) and an EDL (cutroom's comments)", async () => {
    const c = structuredOf<{ edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        clips: [{ asset_id: tone, start: 0, end: 4, gain_db: -3, fade_in: 1 }],
        overlays: [
          { asset_id: tones, at: 0.5, until: 2, from: 1.25, gain_db: -9, fade_out: 0.5, role: 'music', duck_db: 6 },
        ],
      }),
    );
    for (const format of ['otio', 'fcpxml', 'edl']) {
      const out = structuredOf<{ path: string; warnings?: string[] }>(
        await call('export_edit', { project_id: projectId, edit_id: c.edit_id, format }),
      );
      const mixWarnings = (out.warnings ?? []).filter((w) => /gain_db|fade_|duck/.test(w));
      // OTIO and the EDL keep the mix in cutroom's own metadata (read back below); an editor's application does not
      // play the duck, and the warning says so.
      if (format === 'fcpxml')
        expect(mixWarnings, format).toEqual([
          "overlay 1: the music's duck not written to FCPXML (the edit keeps them; previews and local renders play them)",
        ]);
      else
        expect(mixWarnings, format).toEqual([
          `the music's duck under speech is kept in cutroom's ${format.toUpperCase()} metadata (import_edit reads it back), but an editor's application does not play it`,
        ]);
      const back = structuredOf<{ ready: boolean; edit_id: string; diagnostics: unknown[] }>(
        await call('import_edit', { project_id: projectId, content: readFileSync(out.path, 'utf8'), format }),
      );
      expect(back.ready, `${format}: ${JSON.stringify(back.diagnostics)}`).toBe(true);
      const edit = await storedEdit<{
        video_series_sequential: Record<string, unknown>[];
        audio_overlay: Record<string, unknown>[];
      }>(server.client, back.edit_id);
      // An EDL's timecodes count frames (here the edit's 25 fps): its from is on a frame, within one of the edit's.
      if (format === 'edl')
        expect(Math.abs(Number(String(edit.audio_overlay[0]!.from).slice(6)) - 1.25), format).toBeLessThanOrEqual(0.04);
      else expect(edit.audio_overlay[0]!.from, format).toBe('00:00:01.250');
      if (format === 'otio' || format === 'edl') {
        expect(edit.video_series_sequential[0]).toMatchObject({ gain_db: -3, fade_in: 1 });
        expect(edit.audio_overlay[0]).toMatchObject({ gain_db: -9, fade_out: 0.5, role: 'music', duck_db: 6 });
      } else if (format === 'fcpxml') {
        // Its volume: a gain under 0 dB is Final Cut's amount, read back as the level it is (the same sound); fades
        // are its fadeIn/fadeOut; the role is its audioRole (music, ducked by the default when read back).
        const text = readFileSync(out.path, 'utf8');
        expect(text).toMatch(
          /<adjust-volume amount="-3dB">\s*<param name="amount">\s*<fadeIn type="easeInOut" duration="1s"\/>/,
        );
        expect(text).toMatch(/<fadeOut type="easeInOut" duration="1\/2s"\/>/);
        expect(edit.video_series_sequential[0]).toMatchObject({ fade_in: 1 });
        expect(
          Number((edit.video_series_sequential[0]!.audio_levels as { audio_level: number }[])[0]!.audio_level),
        ).toBeCloseTo(10 ** (-3 / 20), 3);
        expect(edit.audio_overlay[0]).toMatchObject({ fade_out: 0.5, role: 'music' });
        expect(Number((edit.audio_overlay[0]!.audio_levels as { audio_level: number }[])[0]!.audio_level)).toBeCloseTo(
          10 ** (-9 / 20),
          3,
        );
      }
      if (format === 'edl')
        expect(readFileSync(out.path, 'utf8')).toContain('* CUTROOM MIX: role=music duck_db=6 gain_db=-9 fade_out=0.5');
    }
  });

  it("an EDL writes a from in the audio's last frame on a frame before its end, so it reads back", async () => {
    const c = structuredOf<{ edit_id: string }>(
      await call('compose_edit', {
        project_id: projectId,
        resolution: '160x90',
        fps: 25,
        clips: [{ asset_id: tone, start: 0, end: 4 }],
        overlays: [{ asset_id: tones, at: 3, until: 3.02, from: 3.99 }],
      }),
    );
    const out = structuredOf<{ path: string }>(
      await call('export_edit', { project_id: projectId, edit_id: c.edit_id, format: 'edl' }),
    );
    const back = structuredOf<{ ready: boolean; diagnostics: unknown[] }>(
      await call('import_edit', { project_id: projectId, content: readFileSync(out.path, 'utf8'), format: 'edl' }),
    );
    expect(back.ready, JSON.stringify(back.diagnostics)).toBe(true);
  });

  it('refuses a gain out of range, fades longer than their cut and a from past the audio, each at its field', async () => {
    const c = structuredOf<{ ready: boolean; diagnostics: { severity: string; path: string; message: string }[] }>(
      await call('compose_edit', {
        project_id: projectId,
        clips: [
          { asset_id: tone, start: 0, end: 2, gain_db: 40 },
          { asset_id: tone, start: 0, end: 2, fade_in: 1.5, fade_out: 1 },
        ],
        overlays: [{ asset_id: tones, at: 0, until: 1, from: 9 }],
      }),
    );
    expect(c.ready).toBe(false);
    const errors = c.diagnostics.filter((d) => d.severity === 'error');
    expect(errors.map((d) => d.path).sort()).toEqual([
      '/audio_overlay/0/from',
      '/video_series_sequential/0/gain_db',
      '/video_series_sequential/1/fade_out',
    ]);
    expect(errors.find((d) => d.path.endsWith('gain_db'))!.message).toMatch(/from -60 to 24/);
    expect(errors.find((d) => d.path.endsWith('fade_out'))!.message).toMatch(
      /fades \(2\.5 ?s\) are longer than the cut \(2 ?s\)/,
    );
    expect(errors.find((d) => d.path.endsWith('from'))!.message).toMatch(/past the end of the audio/);
  });
});

/**
 * The power (dB, relative) of frequency f over [from, to) of x: one Goertzel bin, so another tone in the mix is not
 * counted.
 */
function toneDb(x: Float32Array, f: number, from: number, to: number): number {
  const a = Math.round(from * RATE);
  const b = Math.round(to * RATE);
  const w = (2 * Math.PI * f) / RATE;
  const coeff = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (let i = a; i < b; i++) {
    const s0 = x[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  const power = s1 * s1 + s2 * s2 - coeff * s1 * s2;
  return 10 * Math.log10(power / (b - a) ** 2 + 1e-20);
}

describe('ducking', () => {
  it("follows the dialogue's transcript where it has one: a tone in a pause is not speech, and the music stays up", async () => {
    // A sentence said by flite (0.5 s on), then a 1 kHz tone at 4.5-6 s: the sound test hears both as speech; the
    // transcript (aligned to the known text) has words over the sentence only. The same sound without a transcript
    // (another file, so another asset) ducks under the tone too.
    const said = 'the harbour keeper counted every boat';
    const wav = join(allowed, 'said.wav');
    spawnSync('flite', ['-voice', 'slt', '-t', said, '-o', wav]);
    const make = (name: string, crf: string) => {
      const file = join(allowed, name);
      ffmpeg([
        '-f',
        'lavfi',
        '-i',
        'color=c=gray:s=160x90:r=25:d=7',
        '-i',
        wav,
        '-f',
        'lavfi',
        '-i',
        `sine=f=1000:r=${RATE}:d=7`,
        '-filter_complex',
        `[1:a]aresample=${RATE},adelay=500:all=1,apad[s];[2:a]volume=0.3*between(t\\,4.5\\,6):eval=frame[t];[s][t]amix=inputs=2:duration=longest:normalize=0,atrim=0:7[a]`,
        '-map',
        '0:v',
        '-map',
        '[a]',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-crf',
        crf,
        '-c:a',
        'aac',
        '-b:a',
        '192k',
        file,
      ]);
      return file;
    };
    const withText = await importMedia(make('said-a.mp4', '30'));
    const without = await importMedia(make('said-b.mp4', '31'));
    const music = join(allowed, 'bed300.wav');
    ffmpeg(['-f', 'lavfi', '-i', `sine=f=300:r=${RATE}:d=8`, '-c:a', 'pcm_s16le', music]);
    const m = await importMedia(music);
    const t = structuredOf<{ words?: { start_seconds: number; end_seconds: number }[] }>(
      await call('transcribe_asset', { project_id: projectId, asset_id: withText, text: said, words: true }),
    );
    const lastWord = Math.max(...(t.words ?? []).map((w) => w.end_seconds));
    expect(lastWord).toBeGreaterThan(1.5);
    expect(lastWord).toBeLessThan(4.3);
    const duckedOver = async (asset: string) =>
      soundOf(
        structuredOf<{ path: string }>(
          await call('preview_edit', {
            project_id: projectId,
            resolution: '160x90',
            fps: 25,
            clips: [{ asset_id: asset, start: 0, end: 7 }],
            overlays: [{ asset_id: m, at: 0, role: 'music' }],
          }),
        ).path,
      );
    const a = await duckedOver(withText);
    const quiet = toneDb(a, 300, 0.05, 0.3);
    expect(quiet - toneDb(a, 300, 1.2, 1.8), 'under the words').toBeGreaterThanOrEqual(10);
    expect(Math.abs(quiet - toneDb(a, 300, 4.9, 5.6)), 'under the tone, with a transcript').toBeLessThan(1);
    const b = await duckedOver(without);
    expect(
      toneDb(b, 300, 0.05, 0.3) - toneDb(b, 300, 4.9, 5.6),
      'under the tone, heard in the sound',
    ).toBeGreaterThanOrEqual(10);
  }, 240_000);

  it('holds the duck through a pause shorter than 1.5 s, and comes back only in a longer one', async () => {
    // Speech stand-ins (a 1 kHz tone) at 1-3 s, 4-6 s (a 1 s pause between sentences) and 8.5-9.5 s (a 2.5 s one),
    // under a steady 300 Hz bed: it used to swell back the full 12 dB in every pause over 0.55 s.
    const dialogue = join(allowed, 'pauses.mp4');
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'color=c=gray:s=160x90:r=25:d=10',
      '-f',
      'lavfi',
      '-i',
      `sine=f=1000:r=${RATE}:d=10`,
      '-af',
      "volume='between(t,1,3)+between(t,4,6)+between(t,8.5,9.5)':eval=frame",
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-shortest',
      dialogue,
    ]);
    const music = join(allowed, 'bed.wav');
    ffmpeg(['-f', 'lavfi', '-i', `sine=f=300:r=${RATE}:d=11`, '-c:a', 'pcm_s16le', music]);
    const d = await importMedia(dialogue);
    const m = await importMedia(music);
    const x = soundOf(
      structuredOf<{ path: string }>(
        await call('preview_edit', {
          project_id: projectId,
          resolution: '160x90',
          fps: 25,
          clips: [{ asset_id: d, start: 0, end: 10 }],
          overlays: [{ asset_id: m, at: 0, role: 'music' }],
        }),
      ).path,
    );
    const under = toneDb(x, 300, 1.5, 2.5);
    // Held across the short pause: the bed no more than 2 dB over its level under speech.
    expect(toneDb(x, 300, 3.1, 3.9) - under, 'in the 1 s pause').toBeLessThan(2);
    expect(Math.abs(toneDb(x, 300, 4.5, 5.5) - under)).toBeLessThan(1);
    // Back up in the long pause: its own level, 12 dB over the ducked one.
    expect(toneDb(x, 300, 6.9, 7.9) - under, 'in the 2.5 s pause').toBeGreaterThan(10);
  }, 180_000);

  it('lowers music under the dialogue by duck_db, and only there', async () => {
    // The dialogue: a video whose sound is speech stand-ins (a 1 kHz tone) at 1-3 s and 5-7 s, silent between; the
    // music: a steady 300 Hz tone under all of it, role music, ducked 12 dB (the default).
    const dialogue = join(allowed, 'dialogue.mp4');
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'color=c=gray:s=160x90:r=25:d=8',
      '-f',
      'lavfi',
      '-i',
      `sine=f=1000:r=${RATE}:d=8`,
      '-af',
      "volume='between(t,1,3)+between(t,5,7)':eval=frame",
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'aac',
      '-b:a',
      '192k',
      '-shortest',
      dialogue,
    ]);
    const music = join(allowed, 'music.wav');
    ffmpeg(['-f', 'lavfi', '-i', `sine=f=300:r=${RATE}:d=9`, '-c:a', 'pcm_s16le', music]);
    const d = await importMedia(dialogue);
    const m = await importMedia(music);
    const ducked = {
      project_id: projectId,
      resolution: '160x90',
      fps: 25,
      clips: [{ asset_id: d, start: 0, end: 8 }],
      overlays: [{ asset_id: m, at: 0, role: 'music' }],
    };
    const p = structuredOf<{ path: string; preview_id: string }>(await call('preview_edit', ducked));
    const x = soundOf(p.path);
    // The same edit again is the same preview; another duck is another.
    expect(structuredOf<{ preview_id: string }>(await call('preview_edit', ducked)).preview_id).toBe(p.preview_id);
    expect(
      structuredOf<{ preview_id: string }>(
        await call('preview_edit', { ...ducked, overlays: [{ asset_id: m, at: 0, role: 'music', duck_db: 6 }] }),
      ).preview_id,
    ).not.toBe(p.preview_id);
    const pause = toneDb(x, 300, 3.7, 4.6);
    const before = toneDb(x, 300, 0.1, 0.7);
    for (const [from, to] of [
      [1.2, 2.8],
      [5.2, 6.8],
    ] as const)
      expect(pause - toneDb(x, 300, from, to), `under speech at ${from}-${to} s`).toBeGreaterThanOrEqual(12 - 2);
    // In the pauses (and before the first words) the music plays at its own level.
    expect(Math.abs(pause - before)).toBeLessThan(1);
    expect(pause - toneDb(x, 300, 1.2, 2.8)).toBeLessThan(12 + 2);
    // Speech nobody hears ducks nothing: the same dialogue at volume 0.
    const muted = soundOf(
      structuredOf<{ path: string }>(
        await call('preview_edit', {
          project_id: projectId,
          resolution: '160x90',
          fps: 25,
          clips: [{ asset_id: d, start: 0, end: 8, volume: 0 }],
          overlays: [{ asset_id: m, at: 0, role: 'music' }],
        }),
      ).path,
    );
    expect(Math.abs(toneDb(muted, 300, 3.7, 4.6) - toneDb(muted, 300, 1.2, 2.8))).toBeLessThan(1);
    // duck_db 0 does not duck; a music overlay of another gain keeps its gain.
    const flat = soundOf(
      structuredOf<{ path: string }>(
        await call('preview_edit', {
          project_id: projectId,
          resolution: '160x90',
          fps: 25,
          clips: [{ asset_id: d, start: 0, end: 8 }],
          overlays: [{ asset_id: m, at: 0, role: 'music', duck_db: 0 }],
        }),
      ).path,
    );
    expect(Math.abs(toneDb(flat, 300, 3.7, 4.6) - toneDb(flat, 300, 1.2, 2.8))).toBeLessThan(1);
  }, 180_000);
});

describe('the mix on the service backend', () => {
  it('sends a gain under 0 dB as audio levels, leaves out what the service cannot carry, and says so', async () => {
    const service = new FakeService();
    await service.start();
    const remoteRoot = join(root, 'remote');
    mkdirSync(remoteRoot, { recursive: true });
    const { video, audio } = makeMedia(remoteRoot);
    const project = service.addProject({ name: 'mix' });
    service.media.set('tone-key', video);
    service.media.set('tones-key', audio);
    const v = service.addAsset(project.id, { keyname: 'tone-key', asset_type: 'video', ext: 'mp4' }).id;
    const a = service.addAsset(project.id, { keyname: 'tones-key', asset_type: 'audio', ext: 'wav' }).id;
    const remote = await spawnServer({
      VJ_API_KEY: service.apiKey,
      VJ_API_URL: service.url,
      CUTROOM_CACHE_DIR: join(remoteRoot, 'cache'),
      CUTROOM_DATA_DIR: join(remoteRoot, 'data'),
      CUTROOM_RENDER_WAIT_MS: '8000',
      CUTROOM_LOG_LEVEL: 'error',
    });
    try {
      const r = (await remote.client.callTool(
        {
          name: 'render_edit',
          arguments: {
            project_id: project.id,
            edit: {
              video_series_sequential: [
                {
                  video_id: v,
                  video_start_time: 0,
                  video_end_time: 2,
                  audio_levels: [{ audio_level: 0.5, start_time: 1, end_time: 1.5 }],
                  gain_db: -6,
                },
                { video_id: v, video_start_time: 2, video_end_time: 4, gain_db: 3, fade_in: 0.5 },
              ],
              audio_overlay: [{ audio_id: a, audio_start_time: 0, audio_end_time: 1, from: 1 }],
            },
          },
        },
        { timeout: 120_000 },
      )) as Result;
      const out = structuredOf<{ warnings: { path: string; message: string }[] }>(r);
      const sent = service.requests.filter((q: { path: string }) => q.path.endsWith('/create-edit'));
      expect(sent).toHaveLength(1);
      const body = sent[0]!.body as {
        video_series_sequential: Record<string, unknown>[];
        audio_overlay: Record<string, unknown>[];
      };
      // -6 dB is a factor of 0.501: over the window at 0.5 and the spans around it at 1.
      expect(body.video_series_sequential[0]!.audio_levels).toEqual([
        { audio_level: 0.501, start_time: '00:00:00.000', end_time: '00:00:01.000' },
        { audio_level: 0.251, start_time: '00:00:01.000', end_time: '00:00:01.500' },
        { audio_level: 0.501, start_time: '00:00:01.500', end_time: '00:00:02.000' },
      ]);
      for (const seg of [...body.video_series_sequential, ...body.audio_overlay]) {
        for (const k of ['gain_db', 'fade_in', 'fade_out', 'from']) expect(seg, k).not.toHaveProperty(k);
      }
      expect(
        out.warnings
          .map((w) => w.path)
          .filter((p) => /gain_db|fade_|from/.test(p))
          .sort(),
      ).toEqual(['/audio_overlay/0/from', '/video_series_sequential/1/fade_in', '/video_series_sequential/1/gain_db']);
      expect(out.warnings.find((w) => w.path.endsWith('gain_db'))!.message).toMatch(/gain_db 3 is not sent/);
    } finally {
      await remote.close();
      await service.stop();
    }
  }, 180_000);
});
