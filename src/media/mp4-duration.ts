// How long an mp4 says it lasts: its movie header's duration (mvhd), which is what ffprobe reports as the file's
// duration. Read in a few small reads instead of a process: a preview's last step, 0.1-0.25 s less on this machine.
import { open, type FileHandle } from 'node:fs/promises';

interface Box {
  type: string;
  /** The whole box, header included. */
  length: number;
  header: number;
}

async function boxAt(fh: FileHandle, at: number, end: number): Promise<Box | undefined> {
  const b = Buffer.alloc(16);
  const { bytesRead } = await fh.read(b, 0, 16, at);
  if (bytesRead < 8) return undefined;
  const size = b.readUInt32BE(0);
  const type = b.toString('latin1', 4, 8);
  if (size === 1) return bytesRead < 16 ? undefined : { type, length: Number(b.readBigUInt64BE(8)), header: 16 };
  // 0: the box runs to the end of what holds it.
  return { type, length: size === 0 ? end - at : size, header: 8 };
}

/** The boxes directly in [from, end), in order, until `wanted` is found; undefined if absent or malformed. */
async function find(
  fh: FileHandle,
  from: number,
  end: number,
  wanted: string,
): Promise<{ at: number; box: Box } | undefined> {
  for (let at = from; at + 8 <= end;) {
    const box = await boxAt(fh, at, end);
    if (!box || box.length < box.header || at + box.length > end) return undefined;
    if (box.type === wanted) return { at, box };
    at += box.length;
  }
  return undefined;
}

/** Seconds, as the file's movie header says; undefined for what is not an mp4 with one (the caller probes it). */
export async function mp4Seconds(path: string): Promise<number | undefined> {
  const fh = await open(path, 'r').catch(() => undefined);
  if (!fh) return undefined;
  try {
    const size = (await fh.stat()).size;
    const moov = await find(fh, 0, size, 'moov');
    if (!moov) return undefined;
    const mvhd = await find(fh, moov.at + moov.box.header, moov.at + moov.box.length, 'mvhd');
    if (!mvhd) return undefined;
    const body = Buffer.alloc(32);
    const { bytesRead } = await fh.read(body, 0, 32, mvhd.at + mvhd.box.header);
    // Version 0: 32-bit times (scale at 12, duration at 16); version 1: 64-bit (scale at 20, duration at 24).
    const v1 = body[0] === 1;
    if (bytesRead < (v1 ? 32 : 20)) return undefined;
    const scale = body.readUInt32BE(v1 ? 20 : 12);
    const duration = v1 ? Number(body.readBigUInt64BE(24)) : body.readUInt32BE(16);
    return scale ? duration / scale : undefined;
  } finally {
    await fh.close();
  }
}
