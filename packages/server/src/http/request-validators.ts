/**
 * Request-schema validators (Fastify's Ajv, with Fastify's own options and formats), built once per
 * process and each one on its first request. Fastify's default builds a fresh Ajv for every server
 * and compiles every route's schemas as the routes register: about a seventh of a second per server
 * start, paid again by every server a process starts (each test file starts several) for routes most
 * servers never see. The schemas are module constants, so Ajv's cache, kept for the process, compiles
 * each once; the answers are the same validators', errors included.
 */
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';

type CompileValidator = ReturnType<BuildCompilerFromPool>;
type Validate = ReturnType<CompileValidator>;

const processPool = AjvCompiler();

export const buildValidator: BuildCompilerFromPool = (externalSchemas, ajvOptions) => {
  const compile = processPool(externalSchemas, ajvOptions);
  return (route) => {
    let compiled: Validate | undefined;
    // Fastify reads `errors` off the function it was given after a failed validation.
    const validate = ((data: unknown) => {
      compiled ??= compile(route);
      const valid = compiled(data);
      validate.errors = compiled.errors;
      return valid;
    }) as Validate;
    return validate;
  };
};
