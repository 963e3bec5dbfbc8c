/**
 * `npm run bench -- rules`: what security rules cost. The same REST reads by the same signed-in
 * user are measured with a realistic ruleset in force (one get() lookup: membership of an
 * organisation) and with no rules at all (--dev: open), on the same server, in alternating rounds
 * (rules, none, rules, none) so warm-up and background load fall on both alike:
 * - a document get;
 * - a 20-result list query.
 * The ratio rules/none is what rules cost per request (target: rules cost under 25% of a get).
 * Settings: BENCH_SECONDS (5), BENCH_WARMUP_SECONDS (1), BENCH_CONNECTIONS (10), BENCH_ROUNDS (2).
 */
import { envCount, envNumber, machineLine, progress } from './env.js';
import { createUsers, startBenchHearth } from './hearth-setup.js';
import { measureLoad, type LoadSettings, type LoadTarget } from './load.js';
import { renderTable, type Rate } from './stats.js';

const settings: LoadSettings = {
  seconds: envNumber('BENCH_SECONDS', 5),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 1),
  connections: envCount('BENCH_CONNECTIONS', 10),
};

const ruleset = `rules_version = '2';
service cloud.firestore {
  match /databases/{database}/documents {
    function member(org) {
      let membership = get(/databases/$(database)/documents/orgs/$(org)/members/$(request.auth.uid));
      return membership != null && membership.data.role in ['reader', 'writer'];
    }
    match /orgs/{org}/docs/{doc} {
      allow read: if request.auth != null && member(org);
      allow write: if request.auth != null && member(org) && request.resource.data.title is string;
    }
  }
}
`;

const documents = 200;
const rounds = envCount('BENCH_ROUNDS', 2);

export async function runRulesBench(): Promise<void> {
  console.log('Security rules: reads judged by a ruleset with one get() lookup, beside the same reads by the same user with no rules (open), same server, alternating rounds');
  console.log(`${machineLine()}; autocannon in this process, ${settings.connections} connections, ${settings.seconds} s after ${settings.warmupSeconds} s warm-up`);
  const target = await startBenchHearth();
  try {
    const project = target.hearth.options.defaultProjectId;
    const root = `/v1/projects/${project}/databases/(default)/documents`;
    const owner = { authorization: 'Bearer owner', 'content-type': 'application/json' };
    const [user] = await createUsers(target, 1, 1);
    progress(`seeding ${documents} documents and a membership`);
    const writes = [{ update: { name: `projects/${project}/databases/(default)/documents/orgs/acme/members/${user!.localId}`, fields: { role: { stringValue: 'reader' } } } }];
    for (let i = 0; i < documents; i++) {
      writes.push({ update: { name: `projects/${project}/databases/(default)/documents/orgs/acme/docs/d${String(i).padStart(4, '0')}`, fields: { title: { stringValue: `document ${i}` } } } as never });
    }
    await expectOk(await fetch(`${target.url}${root}:commit`, { method: 'POST', headers: owner, body: JSON.stringify({ writes }) }));
    const release = async () =>
      expectOk(
        await fetch(`${target.url}/emulator/v1/projects/${project}:securityRules`, {
          method: 'PUT',
          headers: owner,
          body: JSON.stringify({ rules: { files: [{ name: 'firestore.rules', content: ruleset }] } }),
        }),
      );
    const withdraw = async () => expectOk(await fetch(`${target.url}/firebaserules.googleapis.com/v1/projects/${project}/releases/cloud.firestore`, { method: 'DELETE', headers: owner }));
    await release();
    const asUser = { authorization: `Bearer ${user!.idToken}`, 'content-type': 'application/json' };
    // Each answer must be a 2xx for autocannon to count it: a denial would end the run.
    await expectOk(await fetch(`${target.url}${root}/orgs/acme/docs/d0001`, { headers: asUser }));
    const listBody = JSON.stringify({ structuredQuery: { from: [{ collectionId: 'docs' }], limit: 20 } });
    const requests: Array<{ name: string; load: LoadTarget }> = [
      { name: 'document get', load: { title: 'get', url: target.url, method: 'GET', path: `${root}/orgs/acme/docs/d0042`, headers: asUser, bodies: [''] } },
      { name: '20-result list query', load: { title: 'list', url: target.url, method: 'POST', path: `${root}/orgs/acme:runQuery`, headers: asUser, bodies: [listBody] } },
    ];
    const measured = new Map<string, { rules: Rate[]; bypass: Rate[] }>(requests.map((request) => [request.name, { rules: [], bypass: [] }]));
    for (let round = 1; round <= rounds; round++) {
      for (const mode of ['rules', 'bypass'] as const) {
        if (mode === 'rules') await release();
        else await withdraw();
        for (const request of requests) {
          progress(`round ${round}: ${request.name}, ${mode === 'rules' ? 'rules in force' : 'no rules'}`);
          measured.get(request.name)![mode].push(await measureLoad(request.load, settings));
        }
      }
    }
    const rows = requests.map((request) => ({ name: request.name, rules: mean(measured.get(request.name)!.rules), bypass: mean(measured.get(request.name)!.bypass) }));
    const head = ['request', 'rules req/s', 'p50/p99 ms', 'no rules req/s', 'p50/p99 ms', 'rules/none', 'rules cost'];
    const body = rows.map((row) => [
      row.name,
      row.rules.perSecond.toFixed(0),
      `${row.rules.p50.toFixed(2)} / ${row.rules.p99.toFixed(2)}`,
      row.bypass.perSecond.toFixed(0),
      `${row.bypass.p50.toFixed(2)} / ${row.bypass.p99.toFixed(2)}`,
      (row.rules.perSecond / row.bypass.perSecond).toFixed(3),
      `${((row.bypass.perSecond / row.rules.perSecond - 1) * 100).toFixed(1)}% of a request`,
    ]);
    console.log(renderTable(head, body));
  } finally {
    await target.close();
  }
}

/** Rates averaged over rounds (latency percentiles too: each round's are comparable). */
function mean(rates: readonly Rate[]): Rate {
  const average = (pick: (rate: Rate) => number) => rates.reduce((sum, rate) => sum + pick(rate), 0) / rates.length;
  return { ...rates[0]!, perSecond: average((rate) => rate.perSecond), p50: average((rate) => rate.p50), p99: average((rate) => rate.p99) };
}

async function expectOk(response: Response): Promise<void> {
  if (!response.ok) throw new Error(`bench setup failed: ${response.status} ${await response.text()}`);
}
