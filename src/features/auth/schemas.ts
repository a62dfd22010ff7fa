import { Type } from 'typebox';
import { MAX_PASSWORD_LENGTH } from '../../shared/api/limits.js';
import { DisplayName, Email, Password } from '../users/schemas.js';

export const SetupBody = Type.Object({
  password: Password,
  email: Type.Optional(Email),
  displayName: Type.Optional(DisplayName),
});

export const LoginBody = Type.Object({
  password: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
  email: Type.Optional(Type.String({ maxLength: 254 })),
});

export const ChangePasswordBody = Type.Object({
  currentPassword: Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH }),
  newPassword: Password,
});

export const SignOnStartQuery = Type.Object({
  returnTo: Type.Optional(
    Type.String({
      maxLength: 2000,
      description: 'A path of this site (`/…`) to land on after signing in; anything else lands on `/`',
    }),
  ),
});

/** What the provider sends back (OpenID Connect Core 3.1.2.5/6); the checks are the service's. */
export const SignOnCallbackQuery = Type.Object(
  {
    state: Type.Optional(Type.String({ maxLength: 1000 })),
    code: Type.Optional(Type.String({ maxLength: 4000 })),
    error: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: true },
);
