/** The command line both SDK suite runners take (scripts/sdk-auth-suite.ts, scripts/sdk-firestore-suite.ts). */
import { parseArgs } from 'node:util';

export interface SuiteArgs {
  sdk: string;
  ref: string;
  tools: string;
  targets: string[];
  suites: string[];
  project: string;
  grep?: string;
  verbose: boolean;
}

export function suiteArgs(script: string, defaultProject: string): SuiteArgs {
  const { values } = parseArgs({
    options: {
      sdk: { type: 'string' },
      ref: { type: 'string', default: 'HEAD' },
      tools: { type: 'string', default: process.env.HEARTH_TOOLS ?? '/work/tools' },
      targets: { type: 'string', default: 'hearth,emulator' },
      suites: { type: 'string', default: 'node,browser' },
      project: { type: 'string', default: defaultProject },
      grep: { type: 'string' },
      verbose: { type: 'boolean', default: false },
    },
  });
  if (!values.sdk) {
    process.stderr.write(`usage: tsx scripts/${script} --sdk FIREBASE_JS_SDK_CHECKOUT [--ref REF] [--tools DIR] [--targets hearth,emulator] [--suites node,browser] [--grep FILE_PART] [--verbose]\n`);
    process.exit(2);
  }
  return {
    sdk: values.sdk,
    ref: values.ref!,
    tools: values.tools!,
    targets: values.targets!.split(','),
    suites: values.suites!.split(','),
    project: values.project!,
    ...(values.grep ? { grep: values.grep } : {}),
    verbose: values.verbose!,
  };
}
