const Sequencer = require('@jest/test-sequencer').default;
const { relative } = require('node:path');
const seconds = require('./suite-seconds.json');

/**
 * Jest's own order (a suite that failed last time first, then the longest first, so no worker sits
 * idle at the end behind one long suite) needs last run's timings, which a fresh clone lacks: with
 * none, it orders by file size, and a short file that runs for minutes (schemathesis.test.ts: 9.5
 * of CI's 27) comes last. Here a suite jest has not timed takes its time from suite-seconds.json
 * (a CI run's timings, by path in the repository); a suite in neither counts as 10 s.
 */
class LongestFirst extends Sequencer {
  time(test) {
    return super.time(test) ?? 1000 * (seconds[relative(test.context.config.rootDir, test.path)] ?? 10);
  }
}

module.exports = LongestFirst;
