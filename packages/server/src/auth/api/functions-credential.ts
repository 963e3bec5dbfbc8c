/**
 * The functions principal: the credential the `--functions` worker's firebase-admin presents. It is
 * minted by Hearth at each start of the worker (functions/worker-process.ts), handed to it over IPC,
 * and is never the admin key: function code never sees that. It is the administrator of the
 * functions' own project only, and only from a direct loopback connection, as the worker makes:
 * a secret that leaked out of the worker is still refused from anywhere else, and from a reverse
 * proxy on the same machine (which says whom it forwards for).
 */
import { timingSafeEqual } from 'node:crypto';

/** Who is on the other end of a connection, as each transport can tell. */
export interface Peer {
  /** The socket's remote address (not a forwarded one). */
  address: string | undefined;
  /** The request says it was forwarded (`X-Forwarded-For`, `Forwarded`, `X-Real-IP`). */
  forwarded: boolean;
}

/** Filled in by the functions domain once its worker runs; empty without `--functions`. */
export interface FunctionsCredentialSlot {
  /** The project the functions run in (`--project`). */
  projectId?: string;
  /** The current worker's secret; undefined while no worker runs. */
  current?: () => string | undefined;
}

export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  return /^(?:::ffff:)?127\.\d+\.\d+\.\d+$/i.test(address) || address === '::1';
}

/** Headers a forwarding proxy adds; the worker's firebase-admin sends none of them. */
export function forwardedBy(headers: Record<string, unknown>): boolean {
  return ['x-forwarded-for', 'forwarded', 'x-real-ip'].some((name) => headers[name] !== undefined);
}

/** An HTTP request's own peer (the socket's, never a forwarded address). */
export function peerOf(request: { socket: { remoteAddress?: string | undefined }; headers: Record<string, unknown> }): Peer {
  return { address: request.socket.remoteAddress, forwarded: forwardedBy(request.headers) };
}

/** A gRPC peer string (`ipv4:127.0.0.1:5000`, `ipv6:[::1]:5000`, `127.0.0.1:5000`) as an address. */
export function addressOfGrpcPeer(peer: string): string | undefined {
  const bare = peer.replace(/^ipv[46]:/, '');
  const bracketed = /^\[([^\]]+)\]:\d+$/.exec(bare);
  if (bracketed) return bracketed[1];
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(bare);
  return v4?.[1];
}

/** Is `token` the worker's current secret, presented by a direct loopback peer, for its own project? */
export function isFunctionsPrincipal(slot: FunctionsCredentialSlot, token: string, peer: Peer | undefined, projectId: string | undefined): boolean {
  const secret = slot.current?.();
  if (!secret || !peer || peer.forwarded || !isLoopback(peer.address)) return false;
  if (projectId === undefined || projectId !== slot.projectId) return false;
  const left = Buffer.from(token);
  const right = Buffer.from(secret);
  return left.length === right.length && timingSafeEqual(left, right);
}
