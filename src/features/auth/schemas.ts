import { Type } from 'typebox';

export const MIN_PASSWORD_LENGTH = 8; // docs/interface.md#limits
export const MAX_PASSWORD_LENGTH = 1_024; // D-AUTH-7

export const Password = Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH });
export const Email = Type.String({ maxLength: 254, anyOf: [{ format: 'email' }, { maxLength: 0 }] });
export const DisplayName = Type.String({ minLength: 1, maxLength: 100 });

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

export const AuthStatus = Type.Object({
  setupRequired: Type.Boolean(),
  authenticated: Type.Boolean(),
  user: Type.Union([Type.Ref('UserProfile'), Type.Null()]),
});
