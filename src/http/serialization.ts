import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { compileOnce } from './compileOnce.js';

const buildSerializers = SerializerSelector();
const serializer = compileOnce<(data: unknown) => string>();

/**
 * Fastify's default serializer factory (`schemaController.compilersFactory.buildSerializer`),
 * reusing a serializer compiled for the same shared schemas, options and response schema.
 */
export const buildCachedSerializers: typeof buildSerializers = (externalSchemas, options) => {
  const compile = buildSerializers(externalSchemas, options);
  const context = JSON.stringify([externalSchemas, options]);
  return (route) => serializer(`${context} ${JSON.stringify(route.schema)}`, () => compile(route));
};
