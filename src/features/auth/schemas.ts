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

export const AuthStatus = Type.Object({
  setupRequired: Type.Boolean(),
  authenticated: Type.Boolean(),
  user: Type.Union([Type.Ref('UserProfile'), Type.Null()]),
});
