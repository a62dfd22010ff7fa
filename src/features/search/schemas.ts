import { type Static, Type } from 'typebox';

export const DEFAULT_SEARCH_LIMIT = 100;
const MAX_SEARCH_LIMIT = 1_000;
export const MAX_SEARCH_QUERY_LENGTH = 1_000;

export const SearchQuery = Type.Object({
  q: Type.String({
    maxLength: MAX_SEARCH_QUERY_LENGTH,
    description: 'Words to find; the last one as a prefix; #word for tags',
  }),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_SEARCH_LIMIT, default: DEFAULT_SEARCH_LIMIT }),
  ),
});
export type SearchQuery = Static<typeof SearchQuery>;
