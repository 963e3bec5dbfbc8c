import { Socket } from 'node:net';
import { isPrimaryMessage, servingSummary, type ChangeLogMessage, type ServingSummary, type WorkerMessage } from './worker-messages.js';

/** What a worker needs of the Hearth it runs (server.ts's Hearth has it). */
export interface HandedConnectionsServer extends Omit<ServingSummary, 'url'> {
  serveHandedConnections(url: string): Promise<void>;
  accept(socket: Socket): void;
  changeLogReached(db: string, seq: number): void;
}

/**
 * A worker of `--workers`: a whole Hearth that listens nowhere and serves the connections its
 * primary hands over. It stops (finishing what is in flight) when told to or when the primary is
 * gone, so no worker outlives a primary that was killed.
 */
export async function serveAsWorker(hearth: HandedConnectionsServer, url: string, stop: (reason: string) => void): Promise<void> {
  await hearth.serveHandedConnections(url);
  process.on('message', (message, handle) => {
    if (!isPrimaryMessage(message)) return;
    if (message.type === 'change-log') {
      hearth.changeLogReached(message.db, message.seq);
      return;
    }
    if (!(handle instanceof Socket)) return;
    hearth.accept(handle);
    handle.resume();
  });
  process.on('disconnect', () => stop('the primary process is gone'));
  const ready: WorkerMessage = { type: 'ready', summary: servingSummary(hearth, url) };
  process.send!(ready);
}

/**
 * A worker's side of the change-log wake-up (SQLite): after a commit here, the primary tells the
 * other workers, whose feeds then read the log at once instead of at their next poll.
 */
export function announceChangeLog(db: string, seq: number): void {
  const message: ChangeLogMessage = { type: 'change-log', db, seq };
  // A primary that is gone cannot forward it; the others' polls read the log anyway.
  if (process.connected) process.send!(message, undefined, {}, () => undefined);
}
