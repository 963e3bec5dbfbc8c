/** The operator console (/console) as the Chromium suites drive it: signing in, and screenshots kept as artifacts. */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { repoRoot } from './hearth.js';

export const consoleArtifacts = join(repoRoot, '.tmp/artifacts/console');

/** Saves a full-page screenshot under .tmp/artifacts/console/<name>.png. */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(consoleArtifacts, { recursive: true });
  await page.screenshot({ path: join(consoleArtifacts, `${name}.png`), fullPage: true });
}

/** Opens /console and signs in with the admin key; returns once the console's header names the operator. */
export async function signInWithAdminKey(page: Page, baseUrl: string, adminKey: string): Promise<void> {
  await page.goto(`${baseUrl}/console`);
  await page.getByRole('textbox', { name: 'Admin key' }).fill(adminKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('console-operator').waitFor();
  assert.equal((await page.getByTestId('console-operator').innerText()).trim(), 'admin');
}

/** Everything the page keeps where scripts can read it: the admin key must be in none of it. */
export async function pageStorage(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const parts = [document.cookie, JSON.stringify({ ...localStorage }), JSON.stringify({ ...sessionStorage })];
    const databases = 'databases' in indexedDB ? await indexedDB.databases() : [];
    parts.push(JSON.stringify(databases));
    return parts.join('\n');
  });
}
