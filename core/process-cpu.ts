import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let clockTicks: number | undefined;

/**
 * The CPU time a process has used so far, user and system, every thread, in seconds, from /proc/<pid>/stat (Linux);
 * undefined once the process is gone or where there is no /proc. The load runner samples its k6 with it, the
 * benchmark its servers.
 */
export function cpuSecondsOf(pid: number): number | undefined {
  clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name may hold spaces and parentheses: the fields are counted from after its closing one, the 3rd
  // field first, so utime and stime (the 14th and 15th) are at 11 and 12.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}
