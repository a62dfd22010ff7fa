import { type Static, Type } from 'typebox';
import { Uuid } from '../../http/schemas.js';

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

/** The file answer's schema, for the OpenAPI document (the bytes are streamed, not serialized). */
export const ImageBinary = Type.String({ format: 'binary' });
