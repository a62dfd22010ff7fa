import { type Static, Type } from 'typebox';

export const HealthStatus = Type.Object({ status: Type.Literal('ok'), version: Type.String() });
export type HealthStatus = Static<typeof HealthStatus>;
