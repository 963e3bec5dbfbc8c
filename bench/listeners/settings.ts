/** The listener bench's settings; index.ts lists the variables. */
import { envCount, envCounts, envList, envNumber } from '../env.js';

export const settings = {
  listeners: envCounts('HEARTH_BENCH_LISTENERS', [1, 100, 1000]),
  perClient: envCount('HEARTH_BENCH_LISTENERS_PER_CLIENT', 50),
  processes: envCount('HEARTH_BENCH_LISTENERS_PROCESSES', 3),
  holdSeconds: Math.round(envNumber('HEARTH_BENCH_LISTENERS_HOLD_S', 60)),
  commits: envCount('HEARTH_BENCH_LISTENERS_COMMITS', 50),
  warmup: Math.round(envNumber('HEARTH_BENCH_LISTENERS_WARMUP', 5)),
  clientSteps: envCounts('HEARTH_BENCH_LISTENERS_CLIENTS', [1000, 5000, 10000]),
  stepCommits: envCount('HEARTH_BENCH_LISTENERS_STEP_COMMITS', 10),
  rounds: envCount('HEARTH_BENCH_LISTENERS_ROUNDS', 5),
  roundCommits: envCount('HEARTH_BENCH_LISTENERS_ROUND_COMMITS', 20),
  targets: envList('HEARTH_BENCH_LISTENERS_TARGETS', ['hearth', 'workers', 'emulator']),
  memoryTargets: envList('HEARTH_BENCH_LISTENERS_MEMORY_TARGETS', ['hearth']),
  profile: process.env.HEARTH_BENCH_LISTENERS_PROFILE ?? '',
};

export interface Shape {
  listeners: number;
  clients: number;
}

export const shapes: Shape[] = settings.listeners.map((listeners) => ({ listeners, clients: Math.ceil(listeners / settings.perClient) }));
