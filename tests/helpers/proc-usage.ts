/**
 * CPU time read from Linux /proc, for the test runner's and the benches' reports and for tests that
 * check which process did the work: the whole machine's, a process's, a process and its children's.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let clockTicks: number | undefined;
/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux unless told otherwise). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** The machine's CPU time so far (/proc/stat, in clock ticks): busy, and busy plus idle. */
export function machineCpuTicks(): { busy: number; all: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields as [number, number, number, number, number, number, number, number];
    const busy = user + nice + system + irq + softirq + steal;
    return { busy, all: busy + idle + iowait };
  } catch {
    return undefined;
  }
}

/**
 * A process's /proc/<pid>/stat fields after its parenthesised command (which may hold spaces and
 * parentheses): state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
 */
export function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds a process has used so far (user and system); throws if it is gone. */
export function processCpuSeconds(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
}

/** The same for a process and every process under it (a primary and its workers); 0 for one gone meanwhile. */
export function processTreeCpuSeconds(pid: number): number {
  try {
    let total = processCpuSeconds(pid);
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      for (const child of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) total += processTreeCpuSeconds(Number(child));
    }
    return total;
  } catch {
    return 0;
  }
}
