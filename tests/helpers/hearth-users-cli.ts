/** `hearth users …` as a user runs it (its own process, on the test's backend): exit code and stderr. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { hearthCommand } from './hearth-command.js';
import { repoRoot } from './hearth.js';
import { backendEnv } from './test-backend.js';

const run = promisify(execFile);

export async function hearthUsers(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await run(process.execPath, [...hearthCommand(), 'users', ...args], { cwd: repoRoot, env: { ...process.env, ...(await backendEnv(args)) } });
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code?: number; stderr?: string };
    return { code: failed.code ?? -1, stderr: failed.stderr ?? '' };
  }
}
