/**
 * A CPU profile of this process (Hearth's, when it is the server) over part of the run, through the
 * inspector: written as a .cpuprofile (Chrome DevTools, speedscope) and summed by function.
 */
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export interface ProfileSummary {
  file: string;
  samples: number;
  /** Self time by function, most first: share of all samples that were not idle. */
  top: { name: string; share: number }[];
}

const repoRoot = resolve(import.meta.dirname, '../..');

export async function profile<T>(file: string, work: () => Promise<T>): Promise<{ result: T; summary: ProfileSummary }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const result = await work();
    const { profile: data } = (await session.post('Profiler.stop')) as { profile: { nodes: ProfileNode[] } };
    writeFileSync(file, JSON.stringify(data));
    return { result, summary: summarize(file, data.nodes) };
  } finally {
    session.disconnect();
  }
}

function summarize(file: string, nodes: ProfileNode[]): ProfileSummary {
  const byFunction = new Map<string, number>();
  let samples = 0;
  for (const node of nodes) {
    const hits = node.hitCount ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (hits === 0 || functionName === '(idle)' || functionName === '(program)') continue;
    const where = url === '' ? '' : ` ${url.startsWith('file://') ? relative(repoRoot, new URL(url).pathname) : url}:${lineNumber + 1}`;
    const name = `${functionName || '(anonymous)'}${where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + hits);
    samples += hits;
  }
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([name, hits]) => ({ name, share: hits / samples }));
  return { file, samples, top };
}
