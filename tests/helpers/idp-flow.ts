import type { TestHearth } from './hearth.js';

/** A tiny browser stand-in for Node tests: follows redirects by hand and keeps cookies per origin. */
export class CookieBrowser {
  private readonly jar = new Map<string, Map<string, string>>();

  async get(url: string): Promise<Response> {
    return this.request(url, { method: 'GET' });
  }

  async postForm(url: string, form: Record<string, string>): Promise<Response> {
    return this.request(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
  }

  /** Follows redirects until a non-redirect answer; returns it and the URL it came from. */
  async follow(url: string, init?: RequestInit): Promise<{ response: Response; url: string }> {
    let response = await this.request(url, init ?? { method: 'GET' });
    let current = url;
    for (let hops = 0; response.status >= 300 && response.status < 400 && hops < 20; hops++) {
      current = new URL(response.headers.get('location')!, current).toString();
      response = await this.request(current, { method: 'GET' });
    }
    return { response, url: current };
  }

  private async request(url: string, init: RequestInit): Promise<Response> {
    const origin = new URL(url).origin;
    const cookies = this.jar.get(origin) ?? new Map<string, string>();
    const headers = new Headers(init.headers);
    if (cookies.size) headers.set('cookie', [...cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      if (/max-age=0|expires=Thu, 01 Jan 1970/i.test(line) || value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    this.jar.set(origin, cookies);
    return response;
  }
}

export interface HandlerEvent {
  type: string;
  eventId: string | null;
  urlResponse: string | null;
  sessionId: string | null;
  error?: { code: string; message: string };
}

/** The data the handler page embeds for its script. */
export function pageData(html: string): { event?: HandlerEvent; refuse?: string; redirectAllowed?: boolean } {
  const match = /<script type="application\/json" id="hearth-data">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error(`no data in page:\n${html.slice(0, 500)}`);
  return JSON.parse(match[1]!) as { event?: HandlerEvent; refuse?: string };
}

export function handlerUrl(server: TestHearth, providerId: string, extra: Record<string, string> = {}): string {
  const params = new URLSearchParams({
    apiKey: server.apiKey,
    appName: '[DEFAULT]',
    authType: 'signInViaPopup',
    redirectUrl: `${server.url}/`,
    v: '12.19.0',
    providerId,
    eventId: '1234567890',
    ...extra,
  });
  return `${server.url}/emulator/auth/handler?${params}`;
}

/**
 * Runs the handler flow against the demo provider up to the AuthEvent the page would hand the SDK:
 * handler start -> provider sign-in page -> submit an email -> back to the handler.
 */
export async function runHandlerFlow(browser: CookieBrowser, server: TestHearth, email: string, providerId = 'oidc.demo', extra: Record<string, string> = {}) {
  const { response: loginPage, url: loginUrl } = await browser.follow(handlerUrl(server, providerId, extra));
  const html = await loginPage.text();
  const action = /action="([^"]+)"/.exec(html);
  if (!action) return { event: pageData(html).event, callbackHtml: html };
  const { response: back } = await browser.follow(new URL(action[1]!, loginUrl).toString(), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email }).toString(),
  });
  const callbackHtml = await back.text();
  return { event: pageData(callbackHtml).event, callbackHtml };
}
