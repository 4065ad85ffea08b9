// The frames a shot scan works on: each as the demuxer lists it (FramePacket), and the stretches of them decoded
// fully (Run). Types only, shared by inspect.ts (which lists and decodes them) and inspect-locate.ts (which decides,
// for footage that moves, which stretches to decode).
/** One video frame as the demuxer lists it: time (relative), size, keyframe. Sorted by time. */
export interface FramePacket {
  t: number;
  size: number;
  key: boolean;
  /** Place in decode order (the demuxer's order): frames shown in another order than decoded mean B-frames. */
  dts?: number;
  /** Its time is the decode time: the container gives no presentation time (AVI), so the list is not to be trusted
   * to pair frames with what a seek decodes. */
  fromDts?: boolean;
}

/** A stretch of frames to decode fully: from frame index `from` (a keyframe) to `to` inclusive. */
export interface Run {
  from: number;
  to: number;
  /**
   * Set when the run stops before the keyframe that closes its last GOP (that keyframe's frame index): the frames
   * after `to` are taken as free of cuts only when frame `to` looks like that keyframe (the test a GOP passes to be
   * skipped) and none of their packets stands out; otherwise the GOP is decoded to its end after all.
   */
  closes?: number;
  /** A second look at a GOP an earlier run decoded with context: a cut on its second frame was already judged. */
  seen?: boolean;
}
