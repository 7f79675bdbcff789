import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, redisEndpoints } from '@sluice/core';

describe('config redis endpoints', () => {
  it('puts the queues and the limiter on redis.url by default, REDIS_URL included', () => {
    expect(redisEndpoints(parseConfig({}))).toEqual({
      queues: { kind: 'node', url: 'redis://127.0.0.1:6379' },
      limiter: { kind: 'node', url: 'redis://127.0.0.1:6379' },
    });
    const moved = loadConfig({ env: { REDIS_URL: 'redis://r:6380' }, path: undefined });
    expect(redisEndpoints(moved).queues).toEqual({ kind: 'node', url: 'redis://r:6380' });
    expect(redisEndpoints(parseConfig({ redis: { limiter: 'redis://limiter:6379/2' } }))).toEqual({
      queues: { kind: 'node', url: 'redis://127.0.0.1:6379' },
      limiter: { kind: 'node', url: 'redis://limiter:6379/2' },
    });
  });

  it('fills REDIS_PASSWORD (and REDIS_USERNAME) into every Redis URL and seed without one, as a Secret gives them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    try {
      const path = join(dir, 'sluice.yaml');
      writeFileSync(
        path,
        'redis:\n  url: redis://main:6379\n  limiter: redis://own:secret@limiter:6379/1\n' +
          '  queues: { cluster: [redis://a:7000, redis://b:7000] }\n',
      );
      const config = loadConfig({ path, env: { REDIS_PASSWORD: 'p@ss/word', REDIS_USERNAME: 'sluice' } });
      expect(config.redis.url).toBe('redis://sluice:p%40ss%2Fword@main:6379');
      // A URL that has its own password keeps it.
      expect(config.redis.limiter).toBe('redis://own:secret@limiter:6379/1');
      expect(config.redis.queues).toMatchObject({
        cluster: ['redis://sluice:p%40ss%2Fword@a:7000', 'redis://sluice:p%40ss%2Fword@b:7000'],
      });
      // ioredis reads the password back as it was given.
      expect(decodeURIComponent(new URL(config.redis.url).password)).toBe('p@ss/word');
      const socket = loadConfig({ path: undefined, env: { REDIS_URL: '/run/redis.sock', REDIS_PASSWORD: 'x' } });
      expect(socket.redis.url).toBe('/run/redis.sock');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes each role and the partitions from the environment, naming the variable when one is wrong', () => {
    const config = loadConfig({
      path: undefined,
      env: {
        SLUICE_REDIS_QUEUES: 'cluster:redis://q-0.q:6379, redis://q-1.q:6379',
        SLUICE_REDIS_LIMITER: 'redis://limiter:6379',
        SLUICE_DISPATCH_PARTITIONS: '3',
        REDIS_PASSWORD: 'pw',
      },
    });
    expect(redisEndpoints(config)).toMatchObject({
      queues: { kind: 'cluster', seeds: ['redis://:pw@q-0.q:6379', 'redis://:pw@q-1.q:6379'] },
      limiter: { kind: 'node', url: 'redis://:pw@limiter:6379' },
    });
    expect(config.redis.dispatchPartitions).toBe(3);
    const bad = (env: Record<string, string>) => () => loadConfig({ path: undefined, env });
    expect(bad({ SLUICE_REDIS_QUEUES: 'cluster:redis://a:1/3' })).toThrow(
      /SLUICE_REDIS_QUEUES \(redis\.queues\) must be .*cluster\.0.*database but 0/,
    );
    expect(bad({ SLUICE_REDIS_LIMITER: 'http://x' })).toThrow(/SLUICE_REDIS_LIMITER \(redis\.limiter\)/);
    expect(bad({ SLUICE_DISPATCH_PARTITIONS: '0' })).toThrow(
      /SLUICE_DISPATCH_PARTITIONS \(redis\.dispatchPartitions\)/,
    );
  });

  it('takes a cluster by its seeds, with a NAT map; TLS seeds connect to names, not resolved addresses', () => {
    const config = parseConfig({
      redis: {
        queues: {
          cluster: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000'],
          natMap: { '172.17.0.2:7000': { host: '127.0.0.1', port: 17000 } },
        },
        limiter: { cluster: ['rediss://:secret@clustercfg.sluice.cache.amazonaws.com:6379'] },
      },
    });
    expect(redisEndpoints(config)).toEqual({
      queues: {
        kind: 'cluster',
        seeds: ['redis://10.0.0.1:7000', 'redis://10.0.0.2:7000'],
        natMap: { '172.17.0.2:7000': { host: '127.0.0.1', port: 17000 } },
        tls: false,
        resolveHostnames: true,
      },
      limiter: {
        kind: 'cluster',
        seeds: ['rediss://:secret@clustercfg.sluice.cache.amazonaws.com:6379'],
        natMap: {},
        tls: true,
        resolveHostnames: false,
      },
    });
    const resolved = parseConfig({ redis: { queues: { cluster: ['rediss://c:6379'], resolveHostnames: true } } });
    expect(redisEndpoints(resolved).queues).toMatchObject({ tls: true, resolveHostnames: true });
  });

  it('names the bad field of an endpoint', () => {
    expect(() => parseConfig({ redis: { queues: { cluster: ['redis://a:7000', 'http://b:7000'] } } })).toThrow(
      /redis\.queues\.cluster\.1: must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    expect(() => parseConfig({ redis: { queues: { cluster: ['not a url'] } } })).toThrow(/redis\.queues\.cluster\.0/);
    expect(() => parseConfig({ redis: { queues: { cluster: ['/tmp/redis.sock'] } } })).toThrow(
      /redis\.queues\.cluster\.0: .*no socket paths/,
    );
    expect(() => parseConfig({ redis: { limiter: { cluster: ['redis://a:7000/3'] } } })).toThrow(
      /redis\.limiter\.cluster\.0: .*no database but 0/,
    );
    expect(() => parseConfig({ redis: { queues: { cluster: [] } } })).toThrow(/redis\.queues\.cluster: /);
    expect(() => parseConfig({ redis: { queues: { cluster: ['rediss://a:7000', 'redis://b:7000'] } } })).toThrow(
      /redis\.queues\.cluster\.1: must use rediss:\/\/ as the first seed/,
    );
    expect(() =>
      parseConfig({ redis: { queues: { cluster: ['redis://:one@a:7000', 'redis://:two@b:7000'] } } }),
    ).toThrow(/redis\.queues\.cluster\.1: must have the credentials of the first seed/);
    expect(() =>
      parseConfig({ redis: { queues: { cluster: ['redis://a:7000'], natMap: { 'b:7000': { host: 'c' } } } } }),
    ).toThrow(/redis\.queues: natMap\.b:7000\.port: .*expected number/);
    expect(() => parseConfig({ redis: { queues: { cluster: 'redis://a:7000' } } })).toThrow(
      /redis\.queues: cluster: .*expected array/,
    );
    expect(() =>
      parseConfig({ redis: { queues: { cluster: ['redis://a:7000'], natMap: { b: { host: 'c', port: 1 } } } } }),
    ).toThrow(/redis\.queues\.natMap\.b: must be host:port/);
    expect(() => parseConfig({ redis: { queues: { cluster: ['redis://a:7000'], tls: true } } })).toThrow(
      /redis\.queues\.tls: unknown key/,
    );
    expect(() => parseConfig({ redis: { queues: 'http://q:6379' } })).toThrow(
      /redis\.queues: must be a redis:\/\/ or rediss:\/\/ URL/,
    );
    expect(() => parseConfig({ redis: { limiter: { seeds: ['redis://a:7000'] } } })).toThrow(
      /redis\.limiter: must be a Redis URL \(one node\), or \{ cluster: \[seed URLs\] \}/,
    );
  });
});
