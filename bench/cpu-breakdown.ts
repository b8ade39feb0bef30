import fs from 'node:fs';
import { cpuSeconds } from './service';

/** The machine's busy CPU seconds so far (every core, every process, those that have ended too), from /proc/stat. */
function machineBusySeconds(): number {
  const [, ...fields] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** Every running process whose command name (`comm`) is `name`: PostgreSQL's backends, Temporal's dev server. */
function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // Ended while we looked.
    }
  }
  return pids;
}

type Roles = Record<string, () => number[]>;

/**
 * Where the machine's CPU went during `work`, by role: CPU seconds of each role's processes (PostgreSQL's
 * backends and Temporal found by name, the rest by the pids `roles` names), and `rest` for everything else
 * (the load generator, which ends with its round, the benchmark itself, the system). A backend that ends
 * during the round is counted in `rest`.
 */
export async function cpuDuring<T>(roles: Roles, work: () => Promise<T>): Promise<{ result: T; seconds: Record<string, number> }> {
  const all: Roles = { ...roles, postgres: () => pidsNamed('postgres'), temporal: () => pidsNamed('temporal') };
  const sample = () => new Map(Object.entries(all).map(([role, pids]) => [role, new Map(pids().map((pid) => [pid, cpuSeconds(pid)]))]));
  const machineBefore = machineBusySeconds();
  const before = sample();
  const result = await work();
  const after = sample();
  const seconds: Record<string, number> = {};
  let known = 0;
  for (const [role, pids] of after) {
    let sum = 0;
    // A process that started during the round counts from zero.
    for (const [pid, cpu] of pids) sum += cpu - (before.get(role)!.get(pid) ?? 0);
    seconds[role] = sum;
    known += sum;
  }
  seconds.rest = Math.max(0, machineBusySeconds() - machineBefore - known);
  return { result, seconds };
}
