import { type Static, Type } from 'typebox';
import { Attachment, Color } from '../../shared/api/notes.js';
import type { NoteColor } from '../../shared/colors.js';

export const ShareLink = Type.Object(
  {
    token: Type.String({ description: '32 random bytes, base64url (D-SHARE-1)' }),
    url: Type.String({ description: '<PUBLIC_URL or the request origin>/s/<token>: the page for people' }),
  },
  { $id: 'ShareLink', title: 'ShareLink' },
);
export type ShareLink = Static<typeof ShareLink>;

/** An attachment as the public sees it: no server path, no noteId. */
export const PublicAttachment = Type.Object(
  {
    ...Type.Pick(Attachment, ['id', 'filename', 'mimeType', 'size', 'width', 'height', 'createdAt'])
      .properties,
    featured: Type.Boolean({ description: "True for the note's first attachment by createdAt (D-SHARE-3)" }),
  },
  { $id: 'PublicAttachment', title: 'PublicAttachment' },
);
export type PublicAttachment = Static<typeof PublicAttachment>;

export const SharedNote = Type.Object(
  {
    title: Type.String(),
    content: Type.String(),
    checklistMode: Type.Boolean(),
    color: Color,
    attachments: Type.Array(Type.Ref('PublicAttachment')),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'SharedNote', title: 'SharedNote' },
);
export interface SharedNote extends Omit<Static<typeof SharedNote>, 'attachments' | 'color'> {
  color: NoteColor;
  attachments: PublicAttachment[];
}

/**
 * Any string: a token of the wrong shape is an invalid token, which the interface answers with
 * 404, not 400 (docs/interface.md#errors). The router already caps path parameters at 200 characters.
 */
export const TokenParams = Type.Object({ token: Type.String() });

/** Any attachment id: one that is not on the shared note is 404 whatever its shape. */
export const SharedAttachmentParams = Type.Object({ token: Type.String(), attachmentId: Type.String() });

export const SharedAttachmentQuery = Type.Object({
  thumb: Type.Optional(Type.Literal('1', { description: 'Send the WebP thumbnail instead of the image' })),
});

/** The answers of the public share page: HTML, whatever the status. */
export const HtmlPage = { content: { 'text/html': { schema: Type.String() } } };
