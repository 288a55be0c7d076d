/**
 * CPU time per process group over a bench run, read from /proc (Linux): where the cores went,
 * not how long anything waited. Processes are grouped by a label the bench gives their pid (and
 * every descendant of it), PostgreSQL backends by name; the rest of the machine is "other".
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Ticks per second of utime/stime (USER_HZ). */
const clockTicks = () => Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

interface ProcessTicks {
  ppid: number;
  comm: string;
  ticks: number;
}

function readAll(): Map<number, ProcessTicks> {
  const all = new Map<number, ProcessTicks>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // comm may hold spaces and parentheses: the fields after it start at the last ')'.
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      // fields[0] is state (field 3); utime and stime are fields 14 and 15.
      all.set(Number(entry), { ppid: Number(fields[1]), comm, ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // gone meanwhile
    }
  }
  return all;
}

export interface CpuSnapshot {
  at: Map<number, ProcessTicks>;
}

export const cpuSnapshot = (): CpuSnapshot => ({ at: readAll() });

/**
 * CPU milliseconds spent between two snapshots, by group. `labels` maps a pid to its group; a
 * process whose ancestor has a label joins that group. Processes that started and ended between
 * the snapshots are not seen (the bench's processes live across the whole run).
 */
export function cpuSpent(before: CpuSnapshot, after: CpuSnapshot, labels: Map<number, string>): Record<string, number> {
  const msPerTick = 1000 / clockTicks();
  const groupOf = (pid: number): string => {
    const seen = new Set<number>();
    for (let p: number | undefined = pid; p && !seen.has(p); p = after.at.get(p)?.ppid) {
      seen.add(p);
      const label = labels.get(p);
      if (label) return label;
    }
    const comm = after.at.get(pid)?.comm ?? '';
    return comm === 'postgres' || comm.startsWith('postgres') ? 'postgresql' : 'other';
  };
  const spent: Record<string, number> = {};
  for (const [pid, now] of after.at) {
    // A kernel worker renames itself with its work queue: a pid seen before is the same process.
    const ticks = now.ticks - (before.at.get(pid)?.ticks ?? 0);
    if (ticks <= 0) continue;
    const group = groupOf(pid);
    spent[group] = (spent[group] ?? 0) + ticks * msPerTick;
  }
  return spent;
}
