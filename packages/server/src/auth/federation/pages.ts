import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The browser scripts of the hosted pages, read once: gapi.js (for apps), iframe.js, handler.js, and --dev's idp-widget.js. */
export const assets = {
  gapi: readFileSync(join(import.meta.dirname, 'assets/gapi.js'), 'utf8'),
  iframe: readFileSync(join(import.meta.dirname, 'assets/iframe.js'), 'utf8'),
  handler: readFileSync(join(import.meta.dirname, 'assets/handler.js'), 'utf8'),
  idpWidget: readFileSync(join(import.meta.dirname, 'assets/idp-widget.js'), 'utf8'),
};

/** Strict policy: our own scripts only, no inline code; the data travels as inert JSON. */
export const pageSecurityHeaders = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** JSON safe inside <script type="application/json">: no `<` can close the element. */
export function inertJson(data: unknown): string {
  return JSON.stringify(data).replaceAll('<', '\\u003c').replaceAll('>', '\\u003e').replaceAll('&', '\\u0026');
}

export function renderPage(title: string, scriptPath: string, data: unknown): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '</head><body style="font-family: sans-serif; margin: 2rem">',
    `<p id="status" role="status">${escapeHtml(title)}…</p>`,
    `<script type="application/json" id="hearth-data">${inertJson(data)}</script>`,
    `<script src="${scriptPath}"></script>`,
    '</body></html>',
  ].join('\n');
}
