import { type Static, Type } from 'typebox';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../shared/api/limits.js';

export const Password = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH });
export const Email = Type.String({ maxLength: 254, anyOf: [{ format: 'email' }, { maxLength: 0 }] });
export const DisplayName = Type.String({ minLength: 1, maxLength: 100 });

export const MAX_USER_SEARCH_RESULTS = 20; // D-COLLAB-3

export const UpdateMeBody = Type.Object({
  email: Type.Optional(Email),
  displayName: Type.Optional(DisplayName),
});
export type UpdateMeBody = Static<typeof UpdateMeBody>;

/** Users other than the owner sign in with their email, so it is required here (D-AUTH-3). */
export const CreateUserBody = Type.Object({
  email: Type.String({ format: 'email', maxLength: 254 }),
  displayName: DisplayName,
  password: Password,
});
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UserIdParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
});

export const UserSearchQuery = Type.Object({
  q: Type.String({ minLength: 1, maxLength: 254, description: 'Part of an email or display name' }),
});
