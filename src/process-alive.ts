// Whether another process still runs: the test behind every "left behind by a process that is gone" sweep (local
// records, render locks, previews, exports). Shared by the rooms that sweep, so they agree on what "gone" is.
import { readFileSync } from 'node:fs';

/** Whether a process with this pid is running: EPERM means it runs as another user; a zombie is gone. */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process not yet reaped by its parent (a zombie) still answers kill(0): it is dead all the same.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}
