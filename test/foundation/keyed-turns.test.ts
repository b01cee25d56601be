import { keyedTurns } from '../../lib/keyed-turns';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('turns per key', () => {
  it('runs calls with one key one at a time, in the order they came, while another key goes at once', async () => {
    const turn = keyedTurns();
    const log: string[] = [];
    const step = (name: string, ms: number) => async () => {
      log.push(`${name} start`);
      await sleep(ms);
      log.push(`${name} end`);
      return name;
    };
    const answers = await Promise.all([
      turn('a', step('a1', 30)),
      turn('a', step('a2', 10)),
      turn('b', step('b1', 5)),
      turn('a', step('a3', 0)),
    ]);
    expect(answers).toEqual(['a1', 'a2', 'b1', 'a3']);
    expect(log).toEqual(['a1 start', 'b1 start', 'b1 end', 'a1 end', 'a2 start', 'a2 end', 'a3 start', 'a3 end']);
  });

  it('gives each caller its own failure and lets the next call with the key run', async () => {
    const turn = keyedTurns();
    const failed = turn('a', async () => {
      await sleep(5);
      throw new Error('lock timeout');
    });
    const next = turn('a', async () => 'ran');
    await expect(failed).rejects.toThrow('lock timeout');
    await expect(next).resolves.toBe('ran');
  });
});
