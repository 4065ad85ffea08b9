// The edit as the service's format carries it (service-interface.md 4.5): level windows of 0-1, overlays played
// from their beginning. cutroom's mix fields (model.ts MixFields, an overlay's `from`) are rendered locally; for the
// service, a gain of 0 dB or less is folded exactly into the segment's audio_levels and the rest is left out, each
// said in a warning; captions are left out, said likewise. A cut's focus becomes the crop that frames it (a fixed
// one exactly; "auto", which one crop per segment cannot carry, a centred one, said). A cut's sound_handles (joins
// crossfaded) are left out, said once. Pure: no I/O.
import type { AudioLevel, AudioSegment, Crop, Diagnostic, Edit, Focus, VideoSegment } from './model.js';
import { parseResolution } from './normalize.js';
import { formatTimecode, parseTimecode } from './timecode.js';
import { frameWindow } from './framing.js';

const ms = (tc: string): number => {
  const r = parseTimecode(tc);
  return r.ok ? r.ms : 0;
};
const round3 = (x: number) => Math.round(x * 1000) / 1000;

/**
 * Level windows over [from, to) (ms, the segment's own clock) with every level times `factor`: the spans no window
 * covers (level 1 there) get a window of their own at `factor`.
 */
export function scaleLevels(levels: AudioLevel[], from: number, to: number, factor: number): AudioLevel[] {
  const sorted = [...levels].sort((a, b) => ms(a.start_time) - ms(b.start_time));
  const out: AudioLevel[] = [];
  let at = from;
  const gap = (end: number) => {
    if (end > at)
      out.push({ audio_level: round3(factor), start_time: formatTimecode(at), end_time: formatTimecode(end) });
  };
  for (const l of sorted) {
    gap(ms(l.start_time));
    out.push({ ...l, audio_level: round3(l.audio_level * factor) });
    at = Math.max(at, ms(l.end_time));
  }
  gap(to);
  return out;
}

/** Display sizes of the sources (asset id -> width and height), to frame a focus as a crop. */
export type SourceSizes = Map<string, { width: number; height: number }>;

/**
 * The crop that frames a fixed focus exactly as previews and local renders do: zoom 1 (the frame covered), the
 * window's centre on the focus as far as the picture allows (position -1..1 spans where the window can sit).
 */
export function focusCrop(
  focus: { x: number; y: number },
  source: { width: number; height: number },
  output: { width: number; height: number },
): Crop {
  const win = frameWindow(source, output);
  const position = (f: number, size: number) => {
    if (size >= 1 - 1e-9) return 0;
    const left = Math.min(1 - size, Math.max(0, f - size / 2));
    return Math.round((2 * (left / (1 - size)) - 1) * 1e4) / 1e4;
  };
  return { zoom: 1, position_x: position(focus.x, win.w), position_y: position(focus.y, win.h) };
}

/** A cut's focus as the service's crop, and what is said about it. */
function focusForService(
  focus: Focus,
  source: { width: number; height: number } | undefined,
  output: { width: number; height: number } | undefined,
  path: string,
  warnings: Diagnostic[],
): Crop | undefined {
  if (focus === 'auto') {
    warnings.push({
      severity: 'warning',
      path: `${path}/focus`,
      message:
        'focus "auto" is sent as a fixed crop at the centre: the service\'s edit format has one crop per cut and cannot follow the action',
      hint: 'previews and local renders follow it; for the service, give focus {x, y} where the action is',
    });
    return { zoom: 1, position_x: 0, position_y: 0 };
  }
  if (!source || !output) {
    warnings.push({
      severity: 'warning',
      path: `${path}/focus`,
      message: "focus is not sent: the source's size is not known, so it cannot be framed as a crop",
      hint: 'check that the asset can be read (get_project), or give crop instead',
    });
    return undefined;
  }
  return focusCrop(focus, source, output);
}

type Mixed = { gain_db?: number; fade_in?: number; fade_out?: number; from?: string; role?: string; duck_db?: number };

/** The service's edit, and what of cutroom's mix it could not carry. */
export function forService(edit: Edit, sources: SourceSizes = new Map()): { edit: Edit; warnings: Diagnostic[] } {
  const warnings: Diagnostic[] = [];
  const size = parseResolution(edit.video_output_resolution);
  const output = 'reason' in size ? undefined : size;
  // A focus becomes the crop that frames it (exactly, for a fixed one).
  const framed = (s: VideoSegment, path: string): VideoSegment => {
    const { focus, sound_handles: _handles, ...plain } = s;
    if (focus === undefined) return plain;
    const crop = focusForService(focus, sources.get(s.video_id), output, path, warnings);
    return crop ? { ...plain, crop } : plain;
  };
  const carry = <S extends (VideoSegment | AudioSegment) & Mixed>(
    seg: S,
    path: string,
    from: number,
    to: number,
  ): S => {
    const { gain_db, fade_in, fade_out, from: start, role, duck_db, ...plain } = seg;
    if (role === 'music' && duck_db !== 0) {
      warnings.push({
        severity: 'warning',
        path: `${path}/role`,
        message: 'the music is not ducked on the service: its edit format has no ducking (or roles)',
        hint: 'previews and local renders duck it; for the service, lower it with gain_db or audio_levels',
      });
    }
    let levels = plain.audio_levels;
    if (gain_db !== undefined && gain_db <= 0) levels = scaleLevels(levels, from, to, 10 ** (gain_db / 20));
    else if (gain_db !== undefined) {
      warnings.push({
        severity: 'warning',
        path: `${path}/gain_db`,
        message: `gain_db ${gain_db} is not sent: the service's levels go up to 1 (0 dB)`,
        hint: 'previews and local renders play it; for the service, lower the others instead',
      });
    }
    for (const [k, v] of [
      ['fade_in', fade_in],
      ['fade_out', fade_out],
    ] as const) {
      if (v !== undefined)
        warnings.push({
          severity: 'warning',
          path: `${path}/${k}`,
          message: `${k} is not sent: the service's edit format has no fades`,
          hint: 'previews and local renders play it',
        });
    }
    if (start !== undefined) {
      warnings.push({
        severity: 'warning',
        path: `${path}/from`,
        message: 'from is not sent: the service plays an overlay from its beginning',
        hint: 'previews and local renders play it; for the service, trim the audio into an asset of its own',
      });
    }
    return { ...plain, audio_levels: levels } as S;
  };
  // The finishing the edit asks: the service's format has no loudness target, no levelling and no captions.
  const { loudness, level_dialogue: _level, captions, ...finished } = edit;
  if (loudness) {
    warnings.push({
      severity: 'warning',
      path: '/loudness',
      message: `the loudness target (${loudness.target_lufs} LUFS) is not sent: the service's edit format has none`,
      hint: 'previews and local renders meet it; for the service, bring the render to it afterwards',
    });
  }
  // (Levelling is on unless turned off: only where the edit has dialogue to level is it worth saying.)
  if (edit.level_dialogue !== false && edit.video_series_sequential.length > 1) {
    warnings.push({
      severity: 'warning',
      path: '/level_dialogue',
      message: "the cuts' sound is not levelled on the service: its edit format has no levelling",
      hint: 'previews and local renders level it; for the service, even the cuts with gain_db (a gain under 0 dB is sent as levels), or set level_dialogue false to hear it as the service will',
    });
  }
  if (edit.video_series_sequential.some((s) => s.sound_handles)) {
    warnings.push({
      severity: 'warning',
      path: '/video_series_sequential',
      message: "the cuts' sound is not crossfaded at joins on the service: its edit format has no crossfades",
      hint: 'previews and local renders crossfade it where the cuts have sound_handles; the service joins them with a short dip',
    });
  }
  if (captions?.burn) {
    warnings.push({
      severity: 'warning',
      path: '/captions',
      message: 'the captions are not burned in on the service: its edit format cannot carry them',
      hint: 'previews and local renders burn them; export_edit writes them as srt or vtt to deliver beside the render',
    });
  }
  return {
    edit: {
      ...finished,
      video_series_sequential: edit.video_series_sequential.map((s, i) =>
        carry(
          framed(s, `/video_series_sequential/${i}`),
          `/video_series_sequential/${i}`,
          ms(s.video_start_time),
          ms(s.video_end_time),
        ),
      ),
      audio_overlay: edit.audio_overlay.map((o, k) =>
        carry(o, `/audio_overlay/${k}`, ms(o.audio_start_time), ms(o.audio_end_time)),
      ),
    },
    warnings,
  };
}
