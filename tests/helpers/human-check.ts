/**
 * What a page does with Hearth's reCAPTCHA stand-in, done from Node: ask for the project's site
 * key, get a proof-of-work challenge, solve it with altcha-lib's own solver and redeem the answer
 * for the single-use token the SDK sends as `recaptchaToken`.
 */
import assert from 'node:assert/strict';
import { solveChallenge, type Challenge, type Solution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2';
import { postJson, type TestHearth } from './hearth.js';

export const challengeUrl = (target: TestHearth) => `${target.url}/__/auth/recaptcha/challenge`;
export const redeemUrl = (target: TestHearth) => `${target.url}/__/auth/recaptcha/redeem`;

export async function siteKeyOf(target: TestHearth): Promise<string> {
  const response = await fetch(`${target.url}/identitytoolkit.googleapis.com/v1/recaptchaParams?key=${target.apiKey}`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { recaptchaSiteKey: string }).recaptchaSiteKey;
}

export async function challengeFor(target: TestHearth, siteKey: string): Promise<Challenge> {
  const response = await postJson(challengeUrl(target), { siteKey });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.challenge as Challenge;
}

export async function solve(challenge: Challenge): Promise<Solution> {
  const solution = await solveChallenge({ challenge, deriveKey });
  assert.ok(solution, 'altcha-lib found no answer');
  return solution;
}

/** challenge -> altcha-lib's solver -> redeem: the token a page would hand the SDK. */
export async function newHumanCheckToken(target: TestHearth, siteKey?: string): Promise<string> {
  const challenge = await challengeFor(target, siteKey ?? (await siteKeyOf(target)));
  const response = await postJson(redeemUrl(target), { challenge, solution: await solve(challenge) });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.token as string;
}
