// Splitting an MJPEG stream (JPEGs back to back, as ffmpeg's mjpeg muxer writes them) into its pictures.
// Marker segments are skipped by their length, so bytes inside tables are never taken for markers; in the
// entropy-coded data a 0xFF is always followed by 0x00 (stuffing) or a restart marker, so the first other
// marker there is the picture's end.

const SOI = 0xd8;
const EOI = 0xd9;
const SOS = 0xda;

/** The pictures of an MJPEG stream, in order; stops at the first byte that does not start a picture. */
export function splitJpegs(data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at + 4 <= data.length && data[at] === 0xff && data[at + 1] === SOI) {
    const end = pictureEnd(data, at + 2);
    if (end === undefined) break;
    out.push(data.subarray(at, end));
    at = end;
  }
  return out;
}

/** Index just past the EOI of the picture whose segments start at `i`, or undefined if it is cut short. */
function pictureEnd(data: Buffer, i: number): number | undefined {
  while (i + 2 <= data.length) {
    if (data[i] !== 0xff) return undefined;
    const marker = data[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === EOI) return i + 2;
    if (i + 4 > data.length) return undefined;
    const length = data.readUInt16BE(i + 2);
    i += 2 + length;
    if (marker !== SOS) continue;
    // Entropy-coded data up to the next marker that is neither stuffing nor a restart marker.
    while (i + 1 < data.length) {
      if (data[i] === 0xff && data[i + 1] !== 0x00 && !(data[i + 1]! >= 0xd0 && data[i + 1]! <= 0xd7)) break;
      i++;
    }
  }
  return undefined;
}
