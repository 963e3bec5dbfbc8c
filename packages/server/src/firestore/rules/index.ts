/**
 * The Firestore Security Rules language: `compileRules` parses and checks a ruleset once,
 * `evaluateRules` judges one access against it. See types.ts for the boundary with the database.
 */
export { compileRules, RulesCompileError, type CompiledRules, type RulesIssue } from './compile.js';
export { evaluateRules, type EvaluateOptions } from './decide.js';
export * from './types.js';
