// Media facts (duration, streams, size, fps) from ffprobe, with a cache per asset and a bounded number of
// probes at once.
import type { MediaFacts } from '../edit/lint.js';
import { inputArgs, type MediaSource } from './input.js';
import { whyFailed, runProcess } from './process.js';

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  start_time?: string;
  time_base?: string;
  channels?: number;
  sample_aspect_ratio?: string;
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
  disposition?: { attached_pic?: number };
}
interface ProbeOutput {
  streams?: ProbeStream[];
  format?: { duration?: string; start_time?: string; format_name?: string; tags?: { timecode?: string } };
}

export class ProbeError extends Error {
  override name = 'ProbeError';
}

function fraction(r: string | undefined): { num: number; den: number } | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(r ?? '');
  if (!m || Number(m[2]) === 0 || Number(m[1]) === 0) return undefined;
  return { num: Number(m[1]), den: Number(m[2]) };
}
const rate = (r: string | undefined): number | undefined => {
  const f = fraction(r);
  return f && f.num / f.den;
};

/** A constant frame rate: the average rate is the base rate (they differ for variable-rate video). */
function constantRate(v: ProbeStream | undefined): { num: number; den: number } | undefined {
  const avg = fraction(v?.avg_frame_rate);
  const base = fraction(v?.r_frame_rate);
  return avg && base && avg.num * base.den === base.num * avg.den ? avg : undefined;
}

/** Reads ffprobe's JSON into facts; display size applies rotation and the sample aspect ratio. */
export function factsFromProbe(p: ProbeOutput): MediaFacts & { isImage: boolean; formatName?: string } {
  const streams = p.streams ?? [];
  // Cover art in an audio file is a video stream marked attached_pic: it does not make the file a video.
  const video = streams.find((s) => s.codec_type === 'video' && s.disposition?.attached_pic !== 1);
  const audio = streams.find((s) => s.codec_type === 'audio');
  const formatName = p.format?.format_name;
  const isImage = !!video && /image2|_pipe|^gif$/.test(formatName ?? '') && !audio;
  const durationS = Number(p.format?.duration ?? video?.duration ?? audio?.duration);
  let width = video?.width;
  let height = video?.height;
  const sar = /^(\d+):(\d+)$/.exec(video?.sample_aspect_ratio ?? '');
  if (width && sar && Number(sar[1]) > 0 && Number(sar[2]) > 0 && sar[1] !== sar[2])
    width = Math.round((width * Number(sar[1])) / Number(sar[2]));
  const rotation = Math.abs(
    video?.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation ?? Number(video?.tags?.rotate ?? 0),
  );
  if (rotation === 90 || rotation === 270) [width, height] = [height, width];
  // A start timecode (camera and NLE media): on the video stream, a timecode track (QuickTime tmcd) or the format.
  const timecode = [video?.tags?.timecode, ...streams.map((s) => s.tags?.timecode), p.format?.tags?.timecode]
    .find((t) => typeof t === 'string' && /^\d{2}:\d{2}:\d{2}[:;.,]\d{2}$/.test(t.trim()))
    ?.trim();
  return {
    ...(Number.isFinite(durationS) && durationS > 0 && !isImage ? { durationMs: Math.round(durationS * 1000) } : {}),
    hasVideo: !!video,
    hasAudio: !!audio,
    ...(width && height ? { width, height } : {}),
    ...((rate(video?.avg_frame_rate) ?? rate(video?.r_frame_rate))
      ? { fps: rate(video?.avg_frame_rate) ?? rate(video?.r_frame_rate) }
      : {}),
    ...(video && !isImage && constantRate(video) ? { frameRate: constantRate(video) } : {}),
    ...(video && Number.isFinite(Number(video.start_time))
      ? { videoStartSec: Math.max(0, Number(video.start_time) - (Number(p.format?.start_time) || 0)) }
      : {}),
    ...(video && !isImage && fraction(video.time_base) ? { videoTimeBase: fraction(video.time_base) } : {}),
    ...(audio?.channels ? { audioChannels: audio.channels } : {}),
    ...(timecode && !isImage ? { timecode } : {}),
    isImage,
    ...(formatName ? { formatName } : {}),
  };
}

export async function probeMedia(
  ffprobe: string,
  src: MediaSource,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<ReturnType<typeof factsFromProbe>> {
  const args = [
    '-v',
    'error',
    '-hide_banner',
    ...inputArgs(src).slice(0, -2),
    '-show_entries',
    'format=duration,start_time,format_name:format_tags=timecode:stream=codec_type,codec_name,width,height,avg_frame_rate,r_frame_rate,duration,start_time,time_base,channels,sample_aspect_ratio:stream_tags=rotate,timecode:stream_disposition=attached_pic:stream_side_data=rotation',
    '-of',
    'json',
    ...inputArgs(src).slice(-2),
  ];
  const r = await runProcess(ffprobe, args, { timeoutMs: opts.timeoutMs, signal: opts.signal, maxStdout: 1024 * 1024 });
  if (r.cancelled) throw new ProbeError('cancelled');
  if (r.timedOut) throw new ProbeError(`ffprobe did not finish within ${Math.round(opts.timeoutMs / 1000)} s`);
  if (r.code !== 0) throw new ProbeError(`ffprobe cannot read it (${whyFailed(r)})`);
  let parsed: ProbeOutput;
  try {
    parsed = JSON.parse(r.stdout.toString('utf8')) as ProbeOutput;
  } catch {
    throw new ProbeError('ffprobe gave no readable answer');
  }
  if (!parsed.streams?.length) throw new ProbeError('no audio or video stream in it');
  const facts = factsFromProbe(parsed);
  if (facts.durationMs === undefined || facts.isImage) return facts;
  // The header's length decides which cuts are allowed: check it against where the media really ends.
  // Packet times are on the file's clock, which may not start at 0 (MPEG-TS).
  const start = Number(parsed.format?.start_time) || 0;
  const claimed = facts.durationMs / 1000;
  // Shorter by more than this (1 s, or 1% of a long file) is a header that claims media the file does not hold.
  const tolerance = Math.max(1, claimed * 0.01);
  const last = await measuredEnd(ffprobe, src, claimed + start, tolerance, opts);
  const end = last === undefined ? undefined : last - start;
  if (end !== undefined && end < claimed - tolerance) {
    return { ...facts, durationMs: Math.round(end * 1000), headerDurationMs: facts.durationMs };
  }
  return facts;
}

/**
 * Where the media's last packet ends, read from a few seconds before the length the header claims (demuxing only: a
 * fraction of a second). A header that lies (a 2 s file claiming 10 hours, a file cut short) cannot be seeked to its
 * claimed end: the read starts wherever the demuxer lands and runs to the real end. The first read is bounded; one
 * that ends short of the claim may have stopped at its bound (a long GOP puts the seek's keyframe far back), so a
 * shorter end is taken only once a read from there to the end of the file confirms it.
 * Undefined when nothing could be read (the header's length then stands).
 */
async function measuredEnd(
  ffprobe: string,
  src: MediaSource,
  claimedSec: number,
  tolerance: number,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<number | undefined> {
  const from = Math.max(0, claimedSec - 5);
  const bounded = await lastPacketEnd(ffprobe, src, `${from.toFixed(3)}%+${(claimedSec - from + 30).toFixed(3)}`, opts);
  if (bounded === undefined || bounded >= claimedSec - tolerance) return bounded;
  // Read on, unbounded, from where the bounded read ended: a seek there lands on the same keyframe or a later one.
  const whole = await lastPacketEnd(ffprobe, src, `${bounded.toFixed(3)}%`, opts);
  return whole === undefined ? undefined : Math.max(bounded, whole);
}

/** The end of the last packet read in `interval` (ffprobe -read_intervals), parsed as it streams (nothing is kept). */
async function lastPacketEnd(
  ffprobe: string,
  src: MediaSource,
  interval: string,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<number | undefined> {
  const args = [
    '-v',
    'error',
    '-hide_banner',
    ...inputArgs(src).slice(0, -2),
    '-read_intervals',
    interval,
    '-show_entries',
    'packet=pts_time,duration_time',
    '-of',
    'csv=p=0',
    ...inputArgs(src).slice(-2),
  ];
  let end: number | undefined;
  let partial = '';
  const take = (line: string) => {
    const [pts, dur] = line.split(',').map(Number);
    if (pts === undefined || !Number.isFinite(pts)) return;
    const e = pts + (Number.isFinite(dur) ? dur! : 0);
    if (end === undefined || e > end) end = e;
  };
  const r = await runProcess(ffprobe, args, {
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    maxStdout: 0,
    onStdout: (chunk) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      lines.forEach(take);
    },
  });
  if (r.cancelled) throw new ProbeError('cancelled');
  if (r.code !== 0 || r.timedOut) return undefined;
  take(partial);
  return end;
}

/** A small semaphore: at most `limit` tasks at once. */
export class Limiter {
  private active = 0;
  private readonly queue: (() => void)[] = [];
  /** How many tasks may run at once: this limiter's own, and within its parent's (one caller's share of a total). */
  readonly limit: number;
  constructor(
    limit: number,
    private readonly parent?: Limiter,
  ) {
    this.limit = parent ? Math.min(limit, parent.limit) : limit;
  }
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await (this.parent ? this.parent.run(task) : task());
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}

/** Probes per asset id, cached (media behind an asset id does not change; its signed URL does). */
export class MediaProber {
  private readonly cache = new Map<string, Promise<ReturnType<typeof factsFromProbe>>>();
  /** The probes that succeeded, by key: what is known without waiting or probing. */
  private readonly settled = new Map<string, ReturnType<typeof factsFromProbe>>();
  private readonly limiter: Limiter;
  constructor(
    readonly ffprobe: string,
    private readonly opts: { concurrency?: number; timeoutMs?: number; maxEntries?: number } = {},
  ) {
    this.limiter = new Limiter(opts.concurrency ?? 4);
  }

  probe(key: string, src: MediaSource, signal?: AbortSignal): Promise<ReturnType<typeof factsFromProbe>> {
    const hit = this.cache.get(key);
    if (hit) return hit;
    const p = this.limiter.run(() =>
      probeMedia(this.ffprobe, src, { timeoutMs: this.opts.timeoutMs ?? 20_000, signal }),
    );
    this.cache.set(key, p);
    // Failures are not remembered: the next call tries again (a link may have expired, a file been fixed).
    p.then(
      (facts) => void (this.cache.get(key) === p && this.settled.set(key, facts)),
      () => this.cache.delete(key),
    );
    if (this.cache.size > (this.opts.maxEntries ?? 1000)) {
      const oldest = this.cache.keys().next().value!;
      this.cache.delete(oldest);
      this.settled.delete(oldest);
    }
    return p;
  }

  /** What an earlier probe found under this key, if one succeeded; never probes. */
  known(key: string): ReturnType<typeof factsFromProbe> | undefined {
    return this.settled.get(key);
  }
}
