/** The web app's Notes page as the Chromium suites read it: the texts shown, and waiting for them. */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';

export async function noteTexts(page: Page): Promise<string[]> {
  return (await page.getByTestId('note-text').allInnerTexts()).map((text) => text.trim());
}

/** Polls until the page shows exactly these notes, in order (fails with the last seen after `waitMs`). */
export async function waitForNotes(page: Page, expected: string[], waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const texts = await noteTexts(page);
    if (JSON.stringify(texts) === JSON.stringify(expected)) return;
    if (Date.now() > deadline) assert.deepEqual(texts, expected);
    await page.waitForTimeout(50);
  }
}
