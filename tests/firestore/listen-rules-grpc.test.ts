/**
 * Issue 28, items 1-3, through firebase v12's Node build (Listen over gRPC): a listener never receives a version it
 * may not read, when a document leaves its query, when it reconnects with its resume token, or when its query names
 * one document. Scenarios in tests/helpers/listen-rules-sdk-suite.ts, checked against Google's emulator too.
 */
import { listenRulesSdkSuite } from '../helpers/listen-rules-sdk-suite.js';

listenRulesSdkSuite('grpc', async () => await import('firebase/firestore'));
