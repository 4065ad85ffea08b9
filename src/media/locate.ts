// Finding ffmpeg and ffprobe: FFMPEG_PATH/FFPROBE_PATH, then PATH, then an npm-installed binary if one is there
// (ffmpeg-static / ffprobe-static are not dependencies: their installs download from outside the registry).
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { SpeechEngine } from './speech.js';

export interface MediaTools {
  ffmpeg?: string;
  ffprobe?: string;
  /** A speech engine for transcripts (speech.ts), when one is installed. */
  speech?: SpeechEngine;
}

export interface LocateOptions {
  ffmpegPath?: string;
  ffprobePath?: string;
  /** The PATH to search, handed in by config (the only reader of the environment). */
  searchPath?: string;
}

export const INSTALL_HINT =
  'install ffmpeg (Debian/Ubuntu: sudo apt-get install -y ffmpeg; macOS: brew install ffmpeg) or point FFMPEG_PATH and FFPROBE_PATH at the binaries';

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function fromPath(name: string, searchPath: string | undefined): Promise<string | undefined> {
  for (const dir of (searchPath ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (await executable(candidate)) return candidate;
  }
  return undefined;
}

async function fromNpm(pkg: string): Promise<string | undefined> {
  try {
    const mod = (await import(pkg)) as { default?: unknown; path?: unknown };
    const p = typeof mod.default === 'string' ? mod.default : ((mod.default as { path?: unknown })?.path ?? mod.path);
    return typeof p === 'string' && (await executable(p)) ? p : undefined;
  } catch {
    return undefined;
  }
}

export async function locateMediaTools(opts: LocateOptions): Promise<MediaTools> {
  const find = async (explicit: string | undefined, name: string, pkg: string) => {
    if (explicit) return (await executable(explicit)) ? explicit : undefined;
    return (await fromPath(name, opts.searchPath)) ?? (await fromNpm(pkg));
  };
  const [ffmpeg, ffprobe] = await Promise.all([
    find(opts.ffmpegPath, 'ffmpeg', 'ffmpeg-static'),
    find(opts.ffprobePath, 'ffprobe', 'ffprobe-static'),
  ]);
  return { ...(ffmpeg ? { ffmpeg } : {}), ...(ffprobe ? { ffprobe } : {}) };
}
