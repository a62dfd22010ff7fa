import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { compileOnce } from './compileOnce.js';

const buildSerializers = SerializerSelector();
export const serializers = compileOnce<(data: unknown) => string>();

/**
 * Fastify's default serializer factory (`schemaController.compilersFactory.buildSerializer`),
 * compiling a route's serializer on its first answer and reusing one compiled for the same
 * shared schemas, options and response schema by any app built in this process (compileOnce.ts).
 */
export const buildCachedSerializers: typeof buildSerializers = (externalSchemas, options) => {
  const compile = buildSerializers(externalSchemas, options);
  let context: string | undefined;
  return (route) => {
    const compiled = serializers.onFirstUse(
      () => {
        context ??= JSON.stringify([externalSchemas, options]);
        return `${context} ${JSON.stringify(route.schema)}`;
      },
      () => compile(route),
    );
    return (data: unknown) => compiled()(data);
  };
};
