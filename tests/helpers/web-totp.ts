import type { Page } from 'playwright-core';
import { TotpDevice } from './totp-device.js';

/**
 * Turns on an authenticator app from the web app's account page (already open, the session recent
 * enough), as a user does: Start, the code of a device made from the secret shown, a name, Turn on.
 * The device, for the codes of later sign-ins.
 */
export async function turnOnAuthenticatorApp(page: Page, name: string): Promise<TotpDevice> {
  await page.getByRole('button', { name: 'Add an authenticator app' }).click();
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const device = new TotpDevice((await page.getByTestId('totp-secret').innerText()).trim());
  await page.getByLabel('Code from the app').fill(device.next());
  await page.getByLabel('Name for it').fill(name);
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByTestId('second-factor-totp').filter({ hasText: name }).waitFor();
  return device;
}
