// The only reader of process.env. Everything else receives a validated Config.
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';

export const DEFAULT_API_URL = 'https://api.video-jungle.com';

const positiveInt = (name: string, min: number, max: number) =>
  z.coerce
    .number({ error: `${name} must be a whole number` })
    .int(`${name} must be a whole number`)
    .min(min, `${name} must be at least ${min}`)
    .max(max, `${name} must be at most ${max}`);

export const ConfigSchema = z.object({
  backend: z.enum(['local', 'remote'], { error: 'VJ_BACKEND must be local or remote' }),
  apiKey: z.string().trim().min(1).optional(),
  apiUrl: z
    .string()
    .url('VJ_API_URL must be an http(s) URL such as https://api.video-jungle.com')
    .refine((u) => /^https?:\/\//i.test(u), 'VJ_API_URL must start with http:// or https://')
    .transform((u) => u.replace(/\/+$/, '')),
  authHeader: z.enum(['x-api-key', 'bearer'], {
    error: 'VJ_AUTH_HEADER must be x-api-key or bearer',
  }),
  timeoutMs: positiveInt('VJ_TIMEOUT_MS', 100, 600_000),
  logLevel: z.enum(['error', 'warn', 'info', 'debug'], {
    error: 'CUTROOM_LOG_LEVEL must be error, warn, info or debug',
  }),
  ffmpegPath: z.string().optional(),
  ffprobePath: z.string().optional(),
  /** PATH, handed to media/locate so that it finds ffmpeg without reading the environment itself. */
  searchPath: z.string().optional(),
  renderWaitMs: positiveInt('CUTROOM_RENDER_WAIT_MS', 0, 55_000),
  renderPollMs: positiveInt('CUTROOM_RENDER_POLL_MS', 20, 5_000),
  cacheDir: z.string().refine((p) => p.startsWith('/') || /^[a-z]:[\\/]/i.test(p), 'CUTROOM_CACHE_DIR must be an absolute path'),
  maxFfmpeg: positiveInt('CUTROOM_MAX_FFMPEG', 1, 16),
  ffmpegMaxInputs: positiveInt('CUTROOM_FFMPEG_MAX_INPUTS', 2, 200),
  previewKeep: positiveInt('CUTROOM_PREVIEW_KEEP', 1, 10_000),
  previewMaxMb: positiveInt('CUTROOM_PREVIEW_MAX_MB', 10, 1_000_000),
  dataDir: z.string().refine((p) => isAbsolute(p), 'CUTROOM_DATA_DIR must be an absolute path'),
  allowedDirs: z.array(z.string()).min(1, 'CUTROOM_ALLOWED_DIRS must name at least one folder'),
});

export type Config = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

/** Reads and validates the environment; throws ConfigError with one line per bad value. */
export function loadConfig(env: Env = process.env): Config {
  const blank = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
  const apiKey = blank(env.VJ_API_KEY);
  const home = blank(env.HOME) ?? homedir();
  const raw = {
    // With a key, the service; without one, the embedded local backend, so cutroom works out of the box.
    backend: (blank(env.VJ_BACKEND) ?? (apiKey ? 'remote' : 'local')).toLowerCase(),
    apiKey,
    apiUrl: blank(env.VJ_API_URL) ?? DEFAULT_API_URL,
    authHeader: (blank(env.VJ_AUTH_HEADER) ?? 'x-api-key').toLowerCase(),
    timeoutMs: blank(env.VJ_TIMEOUT_MS) ?? 30_000,
    logLevel: (blank(env.CUTROOM_LOG_LEVEL) ?? 'info').toLowerCase(),
    ffmpegPath: blank(env.FFMPEG_PATH),
    ffprobePath: blank(env.FFPROBE_PATH),
    searchPath: env.PATH,
    // Clients give up on a tool call near 60 s; stay well inside that.
    renderWaitMs: blank(env.CUTROOM_RENDER_WAIT_MS) ?? 45_000,
    // The first interval between polls of a render; it grows by half each poll, up to 5 s.
    renderPollMs: blank(env.CUTROOM_RENDER_POLL_MS) ?? 1_000,
    cacheDir: blank(env.CUTROOM_CACHE_DIR) ?? join(blank(env.XDG_CACHE_HOME) ?? join(home, '.cache'), 'cutroom'),
    dataDir: blank(env.CUTROOM_DATA_DIR) ?? join(blank(env.XDG_DATA_HOME) ?? join(home, '.local', 'share'), 'cutroom'),
    // A path list like PATH; relative entries are taken from the working directory.
    allowedDirs: (blank(env.CUTROOM_ALLOWED_DIRS) ?? process.cwd()).split(delimiter).filter(Boolean).map((d) => resolve(d)),
    maxFfmpeg: blank(env.CUTROOM_MAX_FFMPEG) ?? 2,
    // Each input costs ffmpeg tens of MB: longer timelines are rendered in chunks of this many inputs.
    ffmpegMaxInputs: blank(env.CUTROOM_FFMPEG_MAX_INPUTS) ?? 16,
    previewKeep: blank(env.CUTROOM_PREVIEW_KEEP) ?? 20,
    previewMaxMb: blank(env.CUTROOM_PREVIEW_MAX_MB) ?? 2048,
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    // Never echo the offending value: it could be the key pasted in the wrong variable.
    const lines = parsed.error.issues.map((i) => i.message);
    throw new ConfigError(`invalid configuration: ${lines.join('; ')}`);
  }
  return parsed.data;
}
