import type { Challenge, Solution } from 'altcha-lib';
import type { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HumanChecks } from '../captcha/human-check.js';
import { clientAddressOf } from '../../http/address-key.js';

/** The stand-in script, read once; its ETag lets browsers revalidate instead of downloading it again. */
const script = readFileSync(join(import.meta.dirname, '../captcha/assets/recaptcha.js'), 'utf8');
const scriptTag = `"${createHash('sha256').update(script).digest('base64url').slice(0, 27)}"`;

const hex = (maxLength: number) => ({ type: 'string', minLength: 2, maxLength, pattern: '^[0-9a-f]+$' });

/** What Hearth issues, and nothing else: an answer is at most a few hundred bytes. */
const challengeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['parameters', 'signature'],
  properties: {
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['algorithm', 'nonce', 'salt', 'cost', 'keyLength', 'keyPrefix'],
      properties: {
        algorithm: { type: 'string', maxLength: 32 },
        nonce: hex(128),
        salt: hex(128),
        cost: { type: 'integer', minimum: 1, maximum: 10_000_000 },
        keyLength: { type: 'integer', minimum: 1, maximum: 64 },
        keyPrefix: hex(128),
        keySignature: hex(128),
        expiresAt: { type: 'integer', minimum: 0, maximum: 1e11 },
        data: { type: 'object', additionalProperties: false, properties: { project: { type: 'string', maxLength: 256 } } },
      },
    },
    signature: hex(128),
  },
};

const redeemBody = {
  type: 'object',
  additionalProperties: false,
  required: ['challenge', 'solution'],
  properties: {
    challenge: challengeSchema,
    solution: {
      type: 'object',
      additionalProperties: false,
      required: ['counter', 'derivedKey'],
      properties: {
        counter: { type: 'integer', minimum: 0, maximum: 0xffffffff },
        derivedKey: hex(128),
        // altcha-lib's solver reports how long it took; ignored.
        time: { type: 'number' },
      },
    },
  },
};

const challengeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['siteKey'],
  properties: { siteKey: { type: 'string', minLength: 1, maxLength: 512 } },
};

const smallBody = { bodyLimit: 8 * 1024 };

/**
 * Hearth's reCAPTCHA stand-in, under the hosted auth paths: the script pages include, and the two
 * calls it makes (a challenge for a site key; a token for an answer). They carry no credentials
 * and set no cookies, so pages on any origin may call them (the app's CORS echoes the origin).
 */
export function registerCaptchaRoutes(app: FastifyInstance, humanChecks: HumanChecks): void {
  app.get('/__/auth/recaptcha.js', (request, reply) => {
    void reply.headers({
      'content-type': 'text/javascript; charset=utf-8',
      // Revalidated on every load (an upgraded Hearth may change how the script talks to it), usually with a 304.
      'cache-control': 'no-cache',
      etag: scriptTag,
      'x-content-type-options': 'nosniff',
      // Pages on other origins include it, even those isolating themselves with COEP.
      'cross-origin-resource-policy': 'cross-origin',
    });
    if (request.headers['if-none-match'] === scriptTag) return reply.status(304).send();
    return reply.send(script);
  });

  app.post('/__/auth/recaptcha/challenge', { ...smallBody, schema: { body: challengeBody } }, async (request, reply) => {
    const { siteKey } = request.body as { siteKey: string };
    const challenge = await humanChecks.challenge(siteKey, clientAddressOf(request));
    void reply.header('cache-control', 'no-store');
    return { challenge };
  });

  app.post('/__/auth/recaptcha/redeem', { ...smallBody, schema: { body: redeemBody } }, async (request, reply) => {
    const { challenge, solution } = request.body as { challenge: Challenge; solution: Solution };
    const redeemed = await humanChecks.redeem(challenge, solution);
    void reply.header('cache-control', 'no-store');
    return redeemed;
  });
}
