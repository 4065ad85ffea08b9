// Progress notifications for long tool calls, sent only when the request asked for them (progressToken).
import type { ServerContext } from '@modelcontextprotocol/server';

export type Progress = (progress: number, total: number | undefined, message: string) => Promise<void>;

export function progressFor(ctx: ServerContext): Progress {
  const token = ctx.mcpReq._meta?.progressToken;
  let last = -1;
  return async (progress, total, message) => {
    if (token === undefined || progress <= last) return;
    last = progress;
    try {
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress, ...(total !== undefined ? { total } : {}), message },
      });
    } catch {
      // A client that went away does not fail the work.
    }
  };
}

/**
 * Progress of a stage given as a fraction (0-1), sent as its `share` of `total` (percent by default; null: sent
 * without a total, counting in hundredths), rising only. Once it has begun it beats every second with a hair more while
 * nothing new
 * comes: a client that resets its timeout on progress keeps waiting. `last` is the value sent last (-1: none).
 */
export function beating(progress: Progress, opts: { total?: number | null; share?: number } = {}) {
  const total = opts.total === undefined ? 100 : (opts.total ?? undefined);
  const scale = total ?? 100;
  const top = scale * (opts.share ?? 1);
  const per = 10_000 / scale;
  const step = 1 / per;
  let sent = -1;
  let message = 'listening';
  let timer: NodeJS.Timeout | undefined;
  const push = (value: number) => {
    if (value <= sent) return;
    sent = value;
    void progress(value, total, message);
  };
  return {
    update: (fraction: number, m: string) => {
      message = m;
      push(Math.round((fraction * top * 1000) / scale) / (1000 / scale));
      timer ??= setInterval(() => sent + step < top * 0.999 && push(Math.round((sent + step) * per) / per), 1000);
    },
    stop: () => clearInterval(timer),
    get last() {
      return sent;
    },
  };
}

/**
 * The progress of a call's next stage, sent above where an earlier one stopped (`floor`, in the same units; -1: it
 * sent nothing): its 0-total is mapped onto floor-total, or, without a total, added to floor. Values keep rising.
 */
export function afterStage(progress: Progress, floor: number): Progress {
  if (floor <= 0) return progress;
  return (p, total, message) =>
    progress(total !== undefined ? floor + (p * (total - floor)) / total : floor + p, total, message);
}
