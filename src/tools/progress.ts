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
