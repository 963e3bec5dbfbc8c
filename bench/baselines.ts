import Fastify, { type FastifyInstance } from 'fastify';
import { KeyObject, randomBytes, scrypt, sign as rsaSign } from 'node:crypto';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defaultScryptParams } from '../packages/server/src/auth/core/passwords.js';

const repoRoot = resolve(import.meta.dirname, '..');

/** The slice of jose 6 the baselines use. */
interface ProtectedHeader {
  alg: string;
  kid?: string;
  typ?: string;
}
interface SignJwtBuilder {
  setProtectedHeader(header: ProtectedHeader): SignJwtBuilder;
  sign(key: CryptoKey): Promise<string>;
}
interface VerifyOptions {
  algorithms: string[];
  issuer?: string;
  audience?: string;
  requiredClaims?: string[];
}
interface Jose {
  SignJWT: new (payload: Record<string, unknown>) => SignJwtBuilder;
  jwtVerify(token: string, key: CryptoKey, options: VerifyOptions): Promise<{ payload: Record<string, unknown> }>;
  generateKeyPair(alg: 'RS256', options: { modulusLength: number }): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }>;
}

/**
 * The jose the server itself resolves (packages/server may hold a newer copy than the root), so the
 * baseline runs the very same signing code path as Hearth.
 */
async function loadServerJose(): Promise<Jose> {
  const serverRequire = createRequire(resolve(repoRoot, 'packages/server/package.json'));
  return (await import(pathToFileURL(serverRequire.resolve('jose')).href)) as Jose;
}

/** One raw scrypt hash with the parameters, key length and memory limit of passwords.ts. */
export function scryptOnce(): () => Promise<Buffer> {
  const { N, r, p } = defaultScryptParams;
  const options = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  const salt = randomBytes(16);
  const password = 'bench-password-1';
  return () =>
    new Promise<Buffer>((resolvePromise, reject) => {
      scrypt(password, salt, 64, options, (error, key) => (error ? reject(error) : resolvePromise(key)));
    });
}

export interface JwtBaseline {
  sign: () => Promise<string>;
  verify: () => Promise<unknown>;
}

/**
 * Raw RS256 with a fresh 2048-bit key. `sign`: one PKCS#1 v1.5 signature by node:crypto on the libuv
 * pool over a ready signing input the size of a real Hearth ID token's, which is what Hearth's
 * signing comes down to (tokens.ts), without building or encoding any claims. `verify`: such a token
 * verified by jose with the checks Hearth applies to a token it has not seen before.
 */
export async function jwtBaseline(sampleIdToken: string): Promise<JwtBaseline> {
  const jose = await loadServerJose();
  const [headerPart, payloadPart] = sampleIdToken.split('.');
  if (!headerPart || !payloadPart) throw new Error('sample ID token is not a JWT');
  const header = JSON.parse(Buffer.from(headerPart, 'base64url').toString('utf8')) as ProtectedHeader;
  const claims = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')) as Record<string, unknown>;
  const { privateKey, publicKey } = await jose.generateKeyPair('RS256', { modulusLength: 2048 });
  const protectedHeader: ProtectedHeader = { alg: 'RS256', kid: header.kid ?? 'bench-key', typ: 'JWT' };
  const token = await new jose.SignJWT({ ...claims }).setProtectedHeader(protectedHeader).sign(privateKey);
  const signingInput = Buffer.from(token.slice(0, token.lastIndexOf('.')));
  const privateKeyObject = KeyObject.from(privateKey);
  const sign = () =>
    new Promise<string>((resolvePromise, reject) => {
      rsaSign('sha256', signingInput, privateKeyObject, (error, signature) => (error ? reject(error) : resolvePromise(signature.toString('base64url'))));
    });
  const options: VerifyOptions = { algorithms: ['RS256'], requiredClaims: ['sub', 'iat', 'exp', 'auth_time'] };
  if (typeof claims.iss === 'string') options.issuer = claims.iss;
  if (typeof claims.aud === 'string') options.audience = claims.aud;
  await jose.jwtVerify(token, publicKey, options);
  return { sign, verify: () => jose.jwtVerify(token, publicKey, options) };
}

export interface TrivialServer {
  url: string;
  path: string;
  close(): Promise<void>;
}

/** The trivial route's whole work, shared by the bare app below and Hearth's own (hearth-setup.ts). */
export const trivialHandler = async (): Promise<{ ok: true }> => ({ ok: true });

/**
 * The floor for any JSON POST route: a bare Fastify app answering {ok:true}; with `sign`, answering
 * one raw RS256 signature instead (the floor for a token refresh served over HTTP).
 */
export async function startTrivialServer(sign?: () => Promise<string>): Promise<TrivialServer> {
  const app: FastifyInstance = Fastify({ logger: false });
  const path = '/trivial';
  if (sign) app.post(path, async () => ({ id_token: await sign() }));
  else app.post(path, trivialHandler);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, path, close: () => app.close() };
}
