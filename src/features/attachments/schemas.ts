import { type Static, Type } from 'typebox';
import type { HeaderDoc } from '../../http/schemas.js';
import { Uuid } from '../../shared/api/ids.js';

export const AttachmentList = Type.Array(Type.Ref('Attachment'));

/** `thumb=1` needs `attachmentId` (D-ATT-4); JSON Schema `dependencies` says so, and so 400s. */
export const GetAttachmentsQuery = Type.Object(
  {
    attachmentId: Type.Optional({ ...Uuid, description: 'Send this attachment’s file instead of the list' }),
    thumb: Type.Optional(Type.Literal('1', { description: 'With attachmentId: send the WebP thumbnail' })),
  },
  { dependencies: { thumb: ['attachmentId'] } },
);
export type GetAttachmentsQuery = Static<typeof GetAttachmentsQuery>;

export const DeleteAttachmentQuery = Type.Object({ attachmentId: Uuid });

/** Sent with every file (D-ATT-4), here and on shared notes' images. */
export const FileETag: HeaderDoc = {
  type: 'string',
  description: 'Entity tag of the file: send it as If-None-Match to get 304 while it is unchanged',
};

/** The file answer's schema, for the OpenAPI document (the bytes are streamed, not serialized). */
export const ImageBinary = Type.String({ format: 'binary' });

/**
 * The upload form, for the OpenAPI document. Fastify validates a multipart request's body
 * against it, but the parts are read as streams, so the body there is undefined; without a
 * `type`, JSON Schema lets that through, and the parts are checked while they stream instead.
 */
export const UploadBody = {
  content: {
    'multipart/form-data': {
      schema: {
        properties: {
          file: { ...ImageBinary, description: 'JPEG, PNG, WebP, GIF or AVIF; at most 10 MiB' },
          thumbnail: { ...ImageBinary, description: 'Optional WebP, at most 1 MiB and 512 px a side' },
        },
        required: ['file'],
      },
    },
  },
};
