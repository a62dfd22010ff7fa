import type { ScryptCost } from '../../src/features/users/passwords.js';

/**
 * scrypt at the lowest cost for test servers: production's cost (D-AUTH-7, ~50–100 ms a hash)
 * made fixture users the suite's largest single cost. auth.test.ts pins the production cost.
 * A module of its own: helpers/lazyModulesChild.ts records what a server loads, and
 * helpers/server.ts would load the pg driver for the PostgreSQL runs.
 */
export const TEST_PASSWORD_COST: ScryptCost = { N: 2, r: 1, p: 1 };
