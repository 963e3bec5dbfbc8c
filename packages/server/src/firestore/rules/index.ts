/**
 * The Firestore Security Rules language: `compileRules` parses and checks a ruleset once,
 * `evaluateRules` judges one access against it. See types.ts for the boundary with the database.
 */
export { compileRules, RulesCompileError, serviceOf, type CompiledRules, type RulesIssue, type RulesService } from './compile.js';
export { evaluateStorageRules, type StorageObjectFields, type StorageRulesRequest, type FirestoreDocumentReader } from './storage-decide.js';
export { evaluateRules, type EvaluateOptions } from './decide.js';
export * from './types.js';
