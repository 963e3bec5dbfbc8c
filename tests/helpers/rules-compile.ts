/**
 * Rulesets with mistakes, for the security-rules differential test: loading one must answer like Google's emulator.
 * A syntax or structure error is 400 INVALID_ARGUMENT `Error compiling rules:\nL<line>:<col> <message>` (lines and
 * columns from 1; compared by the first error's line). A mistake the emulator only warns about (an unknown
 * method, variable or function, a wrong number of arguments, a non-boolean condition) still loads: 200, and the
 * ruleset is used as written.
 */
import { errorOf, type Step } from './rules-requests.js';
import { rulesHeader, rulesFooter } from './rules-cases.js';

export interface BrokenRuleset {
  name: string;
  rules: string;
  /** Why the first error's line is not compared, when it is not. */
  lineNotCompared?: string;
}

const inMatch = (body: string) => `${rulesHeader}\n    match /a/{id} {\n${body}\n    }\n${rulesFooter}\n`;

export const brokenRulesets: BrokenRuleset[] = [
  { name: "missing 'if'", rules: inMatch('      allow read: true;') },
  { name: 'missing closing brace', rules: `${rulesHeader}\n    match /a/{id} {\n      allow read: if true;\n${rulesFooter}\n` },
  {
    name: 'unterminated string',
    rules: inMatch("      allow read: if id == 'abc;"),
    lineNotCompared: 'the emulator points where its lexer gave up (the start of the next line), not at the opening quote; either helps',
  },
  { name: 'unsupported rules_version', rules: "rules_version = '3';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /a/{id} {\n      allow read;\n    }\n  }\n}\n" },
  { name: 'a recursive wildcard mid-path in rules v1', rules: 'service cloud.firestore {\n  match /databases/{database}/documents {\n    match /{path=**}/posts/{p} {\n      allow read;\n    }\n  }\n}\n' },
  { name: 'empty content', rules: '' },
  { name: 'a let bound twice', rules: `${rulesHeader}\n    function f() {\n      let a = 1;\n      let a = 2;\n      return a == 2;\n    }\n    match /a/{id} {\n      allow read: if f();\n    }\n${rulesFooter}\n` },
  { name: 'an unknown operator', rules: inMatch('      allow read: if 1 === 1;') },
  { name: 'a condition that is not an expression', rules: inMatch('      allow read: if ;') },
  { name: 'an allow outside any match', rules: "rules_version = '2';\nservice cloud.firestore {\n  allow read: if true;\n}\n" },
  { name: 'an unknown method (a warning)', rules: inMatch('      allow reed: if true;') },
  { name: 'an unknown variable (a warning)', rules: inMatch('      allow read: if foo == 1;') },
  { name: 'an unknown function (a warning)', rules: inMatch('      allow read: if isOwner();') },
  { name: 'a missing semicolon (accepted)', rules: inMatch('      allow read: if true\n      allow write: if false;') },
  { name: 'a non-boolean condition (a warning)', rules: inMatch("      allow read: if 1 + 'a';") },
];

const compileErrorShape = /^Error compiling rules:\nL(\d+):(\d+) \S/;

/** Why the subject's answer to loading `broken` differs from the emulator's, or undefined when it does not. */
export function compilationMismatch(broken: BrokenRuleset, oracle: Step, subject: Step, subjectLabel: string): string | undefined {
  const shown = () => `ruleset "${broken.name}":\n${broken.rules}\n  emulator: ${oracle.status} ${JSON.stringify(oracle.body)}\n  ${subjectLabel}: ${subject.status} ${JSON.stringify(subject.body)}`;
  if (oracle.status !== subject.status) return `status differs; ${shown()}`;
  if (oracle.status !== 400) return undefined;
  if (errorOf(subject)?.status !== 'INVALID_ARGUMENT') return `error.status is not INVALID_ARGUMENT; ${shown()}`;
  const oracleMessage = String(errorOf(oracle)?.message);
  const subjectMessage = String(errorOf(subject)?.message);
  const subjectShape = compileErrorShape.exec(subjectMessage);
  if (!subjectShape) return `the message is not "Error compiling rules:\\nL<line>:<col> <message>"; ${shown()}`;
  const oracleLine = compileErrorShape.exec(oracleMessage)?.[1];
  // The emulator reports an empty file at L0:0; any position is as good there.
  if (oracleLine !== '0' && !broken.lineNotCompared && subjectShape[1] !== oracleLine) return `the first error is on another line; ${shown()}`;
  return undefined;
}
