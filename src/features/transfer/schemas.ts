import { Type } from 'typebox';

/** The upload form, for the OpenAPI document (see attachments/schemas.ts UploadBody for why no `type`). */
export const ImportBody = {
  content: {
    'multipart/form-data': {
      schema: {
        properties: {
          file: {
            type: 'string',
            format: 'binary',
            description:
              'Our export zip, a Google Keep Takeout zip or a zip of Markdown files; at most 256 MiB',
          },
        },
        required: ['file'],
      },
    },
  },
};

export const ZipBinary = Type.String({ format: 'binary' });
