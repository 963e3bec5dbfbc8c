/**
 * Differential test of Firestore listeners (Listen over gRPC): the same seeded random writes go, one at a time, to
 * Google's official emulator (the oracle) and to Hearth (in-process, --dev), and what firebase-admin `onSnapshot`
 * listeners on each server see must agree. One firebase-admin client per server (`Bearer owner`, `useBigInt` so that
 * integers and doubles stay apart) registers the same listeners: 10 random valid queries from the REST differential's
 * generator (tests/helpers/random-firestore.ts: filters, orders, cursors, offset, limit, collection groups; some as
 * limitToLast; select left out, see `listenable`) and 4 single-document listeners, one of them on a document that
 * does not exist yet. Writes go through REST :commit exactly as generated, one per commit: full sets, masked merges
 * (changed or deleted fields that move documents in and out of queries), deletes, re-creations, creates with
 * exists: false, and transforms (increment, maximum, minimum, array union and removal, REQUEST_TIME). Every write
 * also sets `w`, the write's number.
 *
 * After each write, before comparing, every listener must have caught up:
 *  - on the emulator, a listener the write may concern must come to what a fresh read of the same query (or
 *    document) gives there: the same documents, updateTimes and data. Others must stay where they are;
 *  - on the subject, a listener that agreed with the emulator so far must come to the emulator's listener's state
 *    (the write changes `w` in a document the listener holds before or after, so the old state cannot pass for the
 *    new one); otherwise, or when it does not get there, to what a fresh read on the subject gives.
 * A listener that does not get there within FIRESTORE_DIFF_LISTEN_TIMEOUT_MS (5 s), or leaves it during a short
 * pause that catches late snapshots, is "stuck": shown with what the read has and the listener lacks, and back.
 * Then, per listener:
 *  - state: the ordered document paths and their data (integers apart from doubles, -0 equal to 0, field order
 *    ignored, REQUEST_TIME values masked) must be equal on both servers. It is compared after every write, whatever
 *    the number of snapshots, because servers may coalesce events differently;
 *  - snapshots: one server raising a snapshot for the write and the other none is a mismatch;
 *  - docChanges (type, path, oldIndex, newIndex): compared only when each server raised exactly one snapshot for the
 *    write, as the emulator does for one commit. Both raising snapshots, but not as many, is counted, not failed.
 * A listener that fails on one server only is a mismatch. After a state mismatch a listener is compared again once
 * the two states are equal. Order within a firebase-admin snapshot is the SDK's (explicit orderBy, then the document
 * name: it leaves out the implicit inequality orders), so the server decides which documents a listener holds and
 * the SDK their order.
 *
 * The exact generated query goes on the wire: firebase-admin builds its queries from JavaScript values, which would
 * turn 1.0 into 1 and drop limit 0, so the listened query's internal `toProto()` is replaced by the generated
 * StructuredQuery (the public API still sets the orderBy that the SDK sorts by, and limitToLast). Before listening,
 * that path is checked against the emulator's REST runQuery.
 *
 * On a mismatch the test prints the seed, the listener, both servers' observations, and the write sequence shrunk
 * to a short one that still shows the same kind of mismatch on that listener (replayed with that listener alone, on
 * the seed's initial documents in a fresh collection).
 *
 * Skipped when gcloud and its Firestore emulator component are missing (CI installs them: .ci/run).
 * Knobs: FIRESTORE_DIFF_LISTEN_SEEDS picks the seeds (default 1,2: odd seeds listen to a collection under a
 * document, even ones to a root collection, with collection groups); FIRESTORE_DIFF_LISTEN_WRITES=N the writes per
 * seed (default 100); FIRESTORE_DIFF_SUBJECT=emulator compares a second emulator instead of Hearth, to check the
 * harness and the emulator's determinism (checked: seeds 1-5, no difference, no coalescing difference).
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { catchUpMs, mismatchesShown, queryListenersPerSeed, relativePath, rest, seeds, shrinkBudgetMs, startListeningSides, writesPerSeed, type ListeningSides, type Side } from '../helpers/firestore-differential-listen.js';
import { makePlan, type Plan } from '../helpers/firestore-differential-listen-plan.js';
import { adminQuery, describeListener, wireQuery } from '../helpers/firestore-differential-listen-query.js';
import { describeMismatch, mismatchesToShow, shrink } from '../helpers/firestore-differential-listen-report.js';
import { runSequence } from '../helpers/firestore-differential-listen-run.js';
import { startGoogleEmulator } from '../helpers/firestore-emulator.js';
import { within } from '../helpers/firestore-target.js';

const oracle = await startGoogleEmulator();

const skipWithoutEmulator = !oracle && 'the official Firestore emulator is not installed (gcloud + google-cloud-cli-firestore-emulator; .ci/run installs them)';

describe('Firestore listeners: Hearth raises the snapshots the official emulator raises', { skip: skipWithoutEmulator }, () => {
  let listening: ListeningSides | undefined;
  let sides: [Side, Side];

  before(async () => {
    listening = await startListeningSides(oracle!);
    sides = listening.sides;
  });

  after(async () => {
    await listening?.close();
    await oracle?.stop();
  });

  for (const seed of seeds) {
    test(`seed ${seed}: ${writesPerSeed} writes, one at a time, under ${queryListenersPerSeed} query and 4 document listeners`, async (t) => {
      const plan = await makePlan(seed, sides[0]);
      await checkWireQueries(plan);
      const { mismatches, stats } = await runSequence(plan, sides, plan.listeners, plan.steps, { token: plan.token, catchUpMs, stopAtFirst: false });
      t.diagnostic(
        `${stats.writes} writes (${stats.refusedWrites} refused by both, e.g. a precondition), ${plan.listeners.length} listeners ` +
          `(${plan.refusedByEmulator} generated queries left out: the emulator refused them); ${stats.comparisons} listener states compared, ` +
          `${stats.docChangesCompared} docChanges compared, ${stats.coalescedDifferently} times both raised snapshots but not as many; ` +
          `snapshots raised: emulator ${stats.snapshots[0]}, ${sides[1].label} ${stats.snapshots[1]}`,
      );
      if (stats.refusedListeners.length > 0) t.diagnostic(`listeners the emulator refused, left out:\n${stats.refusedListeners.join('\n')}`);
      if (mismatches.length === 0) return;
      const shown = mismatchesToShow(mismatches);
      const deadline = Date.now() + shrinkBudgetMs;
      const reports: string[] = [];
      for (const mismatch of shown) {
        const { mismatch: smallest, replays, reproduced } = await shrink(plan, sides, mismatch, deadline);
        const note = !reproduced
          ? ` (did not show again when replayed with this listener alone: not shrunk; it may depend on the other listeners or on timing)`
          : mismatch.at < 0
            ? ' (shows again when replayed with this listener alone)'
            : ` (shrunk from ${mismatch.at + 1} writes in ${replays} replays)`;
        reports.push(describeMismatch(smallest, sides[1].label, note));
      }
      const more = mismatches.length > shown.length ? `\n\n… and ${mismatches.length - shown.length} more (the same kind on the same listener, or beyond the first ${mismatchesShown})` : '';
      assert.fail(`${mismatches.length} mismatch(es) between the emulator and ${sides[1].label} (seed ${seed}):\n\n${reports.join('\n\n')}${more}`);
    });
  }

  /** The replaced toProto() must put the generated query on the wire: get() through it equals the emulator's REST runQuery. */
  async function checkWireQueries(plan: Plan): Promise<void> {
    const problems: string[] = [];
    for (const spec of plan.listeners) {
      if (spec.kind !== 'query') continue;
      const answer = await rest(sides[0], `${spec.parent}:runQuery`, { structuredQuery: wireQuery(spec) });
      const fromRest = (answer.body as any[]).filter((element) => element.document).map((element) => relativePath(element.document.name));
      const fromAdmin = (await within(adminQuery(sides[0].db, spec).get(), 'get through the replaced toProto()')).docs.map((doc) => doc.ref.path);
      if (spec.limitToLast) fromAdmin.reverse();
      if (!isDeepStrictEqual(fromAdmin, fromRest)) problems.push(`${describeListener(spec)}\n  REST runQuery: ${JSON.stringify(fromRest)}\n  firebase-admin: ${JSON.stringify(fromAdmin)}`);
    }
    assert.deepEqual(problems, [], 'firebase-admin did not send the generated query (the harness is broken, not the subject)');
  }
});
