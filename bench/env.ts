/** Bench settings from environment variables, and what every bench prints about the machine. */
import { availableParallelism, cpus, platform, release, totalmem } from 'node:os';

export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, not "${raw}"`);
  return value;
}

/** A whole number of at least 1. */
export function envCount(name: string, fallback: number): number {
  return Math.max(1, Math.round(envNumber(name, fallback)));
}

/** A comma-separated list of whole numbers of at least 1 (1_000 and 1000 alike). */
export function envCounts(name: string, fallback: readonly number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  const values = raw.split(',').map((part) => Number(part.trim().replace(/_/g, '')));
  if (values.some((value) => !Number.isInteger(value) || value < 1)) throw new Error(`${name} must list whole numbers of at least 1, not "${raw}"`);
  return values;
}

/** A comma-separated list, lower-cased. */
export function envList(name: string, fallback: readonly string[]): string[] {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return [...fallback];
  return raw.split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
}

/** `machine: 2 cores (CPU), 23.4 GiB, linux 6.1, node v20…` */
export function machineLine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  return `machine: ${availableParallelism()} cores (${cpu}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}, node ${process.version}`;
}

/** A progress line on stderr, so stdout holds the report alone. */
export function progress(message: string): void {
  process.stderr.write(`  … ${message}\n`);
}
