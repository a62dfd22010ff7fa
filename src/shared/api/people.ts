/**
 * People on the wire (docs/api.md "Users", docs/collaboration.md): one definition for the
 * server's validation, serialization and OpenAPI document and for the web app, which imports
 * their types.
 */
import { type Static, Type } from 'typebox';

export const UserProfile = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    displayName: Type.String(),
    isOwner: Type.Boolean(),
  },
  { $id: 'UserProfile', title: 'UserProfile' },
);
export type UserProfile = Static<typeof UserProfile>;

export const UserSummary = Type.Object(
  { id: Type.Integer(), displayName: Type.String(), email: Type.String() },
  { $id: 'UserSummary', title: 'UserSummary' },
);
export type UserSummary = Static<typeof UserSummary>;

export const Collaborator = Type.Object(
  {
    userId: Type.Integer(),
    displayName: Type.String(),
    email: Type.String(),
    addedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Collaborator', title: 'Collaborator' },
);
export type Collaborator = Static<typeof Collaborator>;

export const AuthStatus = Type.Object({
  setupRequired: Type.Boolean(),
  authenticated: Type.Boolean(),
  user: Type.Union([Type.Ref('UserProfile'), Type.Null()]),
  passwordLogin: Type.Boolean({
    description: 'false (`PASSWORD_LOGIN=false`): only the owner may sign in with a password (recovery)',
  }),
  singleSignOn: Type.Union(
    [
      Type.Object({
        displayName: Type.String({ description: 'The button reads "Sign in with <displayName>"' }),
        available: Type.Boolean({
          description: 'false while the identity provider cannot be reached (sign-ons answer 503)',
        }),
      }),
      Type.Null(),
    ],
    { description: 'null: single sign-on is not configured. Sign in at GET /api/auth/oidc/login' },
  ),
});
/** `user` is a reference to UserProfile in the schema (one definition in the OpenAPI document). */
export type AuthStatus = Omit<Static<typeof AuthStatus>, 'user'> & { user: UserProfile | null };
