/** What POST /api/import answers (docs/backup.md), shared by the server and the web app. */
import { type Static, Type } from 'typebox';

export const ImportSummary = Type.Object({
  format: Type.Union([Type.Literal('export'), Type.Literal('keep'), Type.Literal('markdown')], {
    description: 'What the archive was: our export, a Google Keep Takeout, or Markdown files',
  }),
  imported: Type.Integer({ description: 'Notes created' }),
  alreadyThere: Type.Integer({ description: 'Notes an earlier import of the same archive made' }),
  attachments: Type.Integer({ description: 'Attachments stored with the imported notes' }),
  unreadable: Type.Array(Type.Object({ source: Type.String(), reason: Type.String() }), {
    description: 'Notes and attachments left out: the file in the archive and why (the first 100 of them)',
  }),
  unreadableCount: Type.Integer({ description: 'How many were left out in all, listed or not' }),
});
export type ImportSummary = Static<typeof ImportSummary>;
