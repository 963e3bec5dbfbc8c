/**
 * How many processes `hearth start` runs (workers/worker-count.ts), on its own: one unless asked;
 * several refused where one process must hold what they need (--demo-idp, --functions) and past what a
 * transaction id can name; the worker each client address (an IPv6 client: its /64) is served by;
 * and the share of each per-address limit a worker allows behind a trusted proxy.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WorkerRelay, maxWorkers } from '../../packages/server/src/http/worker-relay.js';
import { stickyWorker, workerCount } from '../../packages/server/src/workers/worker-count.js';
import { perAddressShares } from '../../packages/server/src/workers/address-shares.js';
import { defaultOptions, type HearthOptions } from '../../packages/server/src/config.js';
import { webChannelDefaults } from '../../packages/server/src/firestore/api/webchannel.js';

const machine = { demoIdp: false, cores: 2 };

test('one process unless asked; several refused with --demo-idp and --functions, which hold what one process knows', () => {
  assert.deepEqual(workerCount({ ...machine, given: undefined }), { count: 1, note: 'one process (--workers 2 for one per core)' });
  assert.deepEqual(workerCount({ ...machine, given: 3 }), { count: 3 });
  assert.deepEqual(workerCount({ ...machine, given: 1 }), { count: 1 });
  const functions = workerCount({ ...machine, functions: true, given: 2 });
  assert.ok('error' in functions && /--functions gives its code a credential only the process that runs it knows/.test(functions.error), JSON.stringify(functions));
  assert.deepEqual(workerCount({ ...machine, functions: true, given: 1 }), { count: 1 });
  const demo = workerCount({ ...machine, demoIdp: true, given: 2 });
  assert.ok('error' in demo && /--demo-idp/.test(demo.error), JSON.stringify(demo));
});

test('no more workers than a transaction id can name, and the last one is named exactly', () => {
  assert.deepEqual(workerCount({ ...machine, given: maxWorkers }), { count: maxWorkers });
  const over = workerCount({ ...machine, given: maxWorkers + 1 });
  assert.ok('error' in over && over.error.includes(`at most ${maxWorkers}`), JSON.stringify(over));
  // The highest index a worker can have round-trips through its tag and its session ids.
  const last = new WorkerRelay(maxWorkers - 1, '/nonexistent');
  const first = new WorkerRelay(0, '/nonexistent');
  const id = Buffer.concat([last.transactionTag(), Buffer.alloc(16)]).toString('base64');
  assert.equal(first.ownerOfTransaction(id), maxWorkers - 1);
  assert.equal(first.ownerOfSession(last.sessionId()), maxWorkers - 1);
  assert.equal(last.ownerOfTransaction(id), undefined, 'its own transaction is not relayed');
});

test('every connection of one address goes to one worker, IPv4 written as IPv6 included', () => {
  const addresses = Array.from({ length: 200 }, (_, i) => `10.0.${i >> 4}.${i & 15}`);
  const counts = [0, 0, 0];
  for (const address of addresses) {
    const worker = stickyWorker(address, 3);
    assert.equal(stickyWorker(address, 3), worker);
    assert.equal(stickyWorker(`::ffff:${address}`, 3), worker);
    counts[worker]! += 1;
  }
  // Spread over all three (not a bound on fairness: each gets a share).
  assert.ok(counts.every((n) => n > 30), `shares ${counts.join(', ')}`);
});

test('an IPv6 client is its /64, as the per-address limits count it: every address of it goes to one worker', () => {
  const host = stickyWorker('2001:db8:1:2::1', 7);
  for (const address of ['2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9']) assert.equal(stickyWorker(address, 7), host, address);
  const others = Array.from({ length: 50 }, (_, i) => stickyWorker(`2001:db8:1:${(i + 3).toString(16)}::1`, 7));
  assert.ok(new Set(others).size > 1, 'other /64s spread over the workers');
});

test('behind a trusted proxy each worker allows its share of every per-address limit; otherwise the whole', () => {
  const proxied = defaultOptions({ trustProxy: ['127.0.0.1'] });
  const limitsOf = (options: HearthOptions) => ({
    uploads: options.files.uploadsPerAddress,
    downloads: options.files.downloadsPerAddress,
    sessions: options.webChannelLimits?.maxSessionsPerAddress ?? webChannelDefaults.maxSessionsPerAddress,
    queued: options.webChannelLimits?.maxQueuedCharsPerAddress ?? webChannelDefaults.maxQueuedCharsPerAddress,
  });
  const whole = limitsOf(proxied);
  assert.deepEqual(whole, { uploads: 32, downloads: 16, sessions: 200, queued: 32 * 1024 * 1024 });
  // Two workers: half each, so a client whose connections the proxy spreads over both gets the whole once.
  assert.deepEqual(limitsOf(perAddressShares(proxied, 2)), { uploads: 16, downloads: 8, sessions: 100, queued: 16 * 1024 * 1024 });
  // Rounded up: three workers never allow less than the whole between them.
  assert.deepEqual(limitsOf(perAddressShares(proxied, 3)), { uploads: 11, downloads: 6, sessions: 67, queued: Math.ceil((32 * 1024 * 1024) / 3) });
  // Limits given by flags are shared the same way.
  const given = defaultOptions({ trustProxy: ['10.0.0.1'], webChannelLimits: { maxSessionsPerAddress: 10 } });
  assert.equal(limitsOf(perAddressShares(given, 2)).sessions, 5);
  // Without a proxy every client stays on one worker, and one worker counts everything.
  assert.deepEqual(limitsOf(perAddressShares(defaultOptions(), 2)), whole);
  assert.deepEqual(limitsOf(perAddressShares(proxied, 1)), whole);
});
