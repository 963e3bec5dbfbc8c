/**
 * The console overview's document counter on its own: it follows a bounded number of databases
 * (operators may open the overview of any number of projects), dropping the one asked about least
 * recently, which is counted again when asked.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DocumentCounter, maxFollowedDatabases, type CommitFeed } from '../../packages/server/src/console/document-counter.js';
import type { CommitEvent } from '../../packages/server/src/firestore/core/database.js';

function feed(): CommitFeed & { commit(event: CommitEvent): void } {
  const listeners = new Set<(event: CommitEvent) => void>();
  return {
    onCommit: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onClear: () => () => undefined,
    commit: (event) => {
      for (const listener of listeners) listener(event);
    },
  };
}

test('at most maxFollowedDatabases are followed; the least recently asked goes first and is counted again when asked', async () => {
  const counted: string[] = [];
  const commits = feed();
  const counter = new DocumentCounter(commits, async (dbKey) => {
    counted.push(dbKey);
    return { total: 5, asOf: 0 };
  });
  assert.equal(await counter.documents('p0/(default)', 1_000), 5);
  for (let i = 1; i <= maxFollowedDatabases; i++) {
    // p0 asked again half way: it is then among the most recent, so p1 is the one dropped at the end.
    if (i === maxFollowedDatabases / 2) assert.equal(await counter.documents('p0/(default)', 1_000), 5);
    assert.equal(await counter.documents(`p${i}/(default)`, 1_000), 5);
  }
  assert.equal(counted.length, maxFollowedDatabases + 1, 'each counted once so far');
  // A commit in p0 still moves its number: it is followed.
  commits.commit({ dbKey: 'p0/(default)', commitTime: 10, changes: [{ path: 'a/b', before: undefined, after: {} }] } as unknown as CommitEvent);
  assert.equal(await counter.documents('p0/(default)', 1_000), 6);
  assert.equal(counted.length, maxFollowedDatabases + 1);
  // p1 was dropped: asked again, it is counted again.
  assert.equal(await counter.documents('p1/(default)', 1_000), 5);
  assert.equal(counted.filter((dbKey) => dbKey === 'p1/(default)').length, 2);
  counter.close();
});
