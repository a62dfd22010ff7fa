// Preloaded (node --import) into a server process to run its clock CLOCK_SKEW_MS ahead, as on
// another machine whose clock is off: the tests of time across processes (decision 0022).
const skew = Number(process.env.CLOCK_SKEW_MS ?? 0);
const systemNow = Date.now;
Date.now = () => systemNow() + skew;
