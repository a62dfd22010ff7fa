import { type Static, Type } from 'typebox';

export const HealthStatus = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String(),
  redis: Type.Optional(
    Type.Union([Type.Literal('ok'), Type.Literal('unreachable')], {
      description:
        'With REDIS_URL only: whether Redis answers. While it does not, sign-ins and public share links answer 503 `unavailable`; everything else works, so the process stays healthy (decision 0028)',
    }),
  ),
});
export type HealthStatus = Static<typeof HealthStatus>;
