// Which processes are running with some text in their command line (or working in a folder whose path holds it: an
// ffmpeg run in cutroom's segment folder may name its files there relative to it), read from /proc (no procps needed).
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export function pidsMatching(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Zombies have exited already; they only wait for their parent to notice.
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      const cwd = (() => {
        try {
          return readlinkSync(`/proc/${entry}/cwd`);
        } catch {
          return '';
        }
      })();
      if (cmdline.includes(text) || cwd.includes(text)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** A process's command line, its arguments joined by spaces ('' when it is gone). */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}
