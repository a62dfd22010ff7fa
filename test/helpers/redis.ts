/**
 * Redis for the tests of the rate limits in it (REDIS_URL): with TEST_REDIS_URL set (`.ci/redis.sh`
 * prints one), those tests run; without it they skip, like the PostgreSQL ones.
 */
export const testRedisUrl = process.env.TEST_REDIS_URL || undefined;
