/** The NOTIFY that wakes other instances' change feeds (pg-change-feed.ts). */
export const changeChannel = 'hearth_changes';

/** The NOTIFY payload: which database, up to which sequence. */
export function notifyPayload(db: string, seq: number): string {
  return `${seq} ${db}`;
}

export function parseNotifyPayload(payload: string | undefined): { db: string; seq: number } | undefined {
  const space = payload?.indexOf(' ') ?? -1;
  if (!payload || space < 1) return undefined;
  const seq = Number(payload.slice(0, space));
  return Number.isSafeInteger(seq) ? { db: payload.slice(space + 1), seq } : undefined;
}
