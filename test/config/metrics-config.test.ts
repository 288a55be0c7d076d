/**
 * Who may read /metrics, as the environment says: anyone in development and tests, nobody in
 * production unless METRICS_TOKEN, METRICS_PORT or METRICS=true says so; a short token refused
 * at start without echoing it.
 */
import { describe, expect, it } from 'bun:test';
import { ConfigError, loadRegistryConfig, readMetricsConfig, readSkillServerMetricsConfig } from '../../src/config';

const TOKEN = 'a-metrics-token-0123456789';

describe('the metrics configuration', () => {
  it('serves them to anyone on the server’s own port in development and tests', () => {
    expect(readMetricsConfig({}, 'development', '0.0.0.0')).toEqual({ enabled: true });
    expect(readMetricsConfig({}, 'test', '0.0.0.0')).toEqual({ enabled: true });
  });

  it('turns them off in production unless configured', () => {
    expect(readMetricsConfig({}, 'production', '0.0.0.0')).toEqual({ enabled: false });
    expect(readMetricsConfig({ METRICS: 'true' }, 'production', '0.0.0.0')).toEqual({ enabled: true });
    expect(readMetricsConfig({ METRICS_TOKEN: TOKEN }, 'production', '0.0.0.0')).toEqual({ enabled: true, token: TOKEN });
    expect(readMetricsConfig({ METRICS_PORT: '9464' }, 'production', '10.0.0.5')).toEqual({
      enabled: true,
      listener: { host: '10.0.0.5', port: 9464 },
    });
    expect(readMetricsConfig({ METRICS_PORT: '9464', METRICS_HOST: '127.0.0.1', METRICS_TOKEN: TOKEN }, 'production', '0.0.0.0')).toEqual({
      enabled: true,
      token: TOKEN,
      listener: { host: '127.0.0.1', port: 9464 },
    });
    expect(readMetricsConfig({ METRICS: 'false', METRICS_TOKEN: TOKEN }, 'development', '0.0.0.0')).toMatchObject({ enabled: false });
  });

  it('refuses a short token or a bad port, naming the variable and never the token', () => {
    const short = () => readMetricsConfig({ METRICS_TOKEN: 'short-secret' }, 'production', '0.0.0.0');
    expect(short).toThrow(ConfigError);
    expect(short).toThrow(/^METRICS_TOKEN must be at least 16 characters/);
    try {
      short();
    } catch (error) {
      expect(String(error)).not.toContain('short-secret');
    }
    expect(() => readMetricsConfig({ METRICS_PORT: 'http' }, 'production', '0.0.0.0')).toThrow(/^METRICS_PORT must be a port number/);
  });

  it('is read by the registry’s configuration, on the registry’s HOST', () => {
    const config = loadRegistryConfig({ NODE_ENV: 'test', HOST: '127.0.0.1', METRICS_PORT: '9464' });
    expect(config.metrics).toEqual({ enabled: true, listener: { host: '127.0.0.1', port: 9464 } });
  });

  it('is opt-in for `market serve`: on with --dev or NODE_ENV development, else only when its MARKET_ variables say so', () => {
    expect(readSkillServerMetricsConfig({}, true, '127.0.0.1')).toEqual({ enabled: true });
    expect(readSkillServerMetricsConfig({ NODE_ENV: 'development' }, false, '0.0.0.0')).toEqual({ enabled: true });
    expect(readSkillServerMetricsConfig({}, false, '0.0.0.0')).toEqual({ enabled: false });
    expect(readSkillServerMetricsConfig({ NODE_ENV: 'staging' }, false, '0.0.0.0')).toEqual({ enabled: false });
    expect(readSkillServerMetricsConfig({ NODE_ENV: 'production', METRICS_TOKEN: TOKEN }, false, '0.0.0.0')).toEqual({ enabled: false });
    expect(readSkillServerMetricsConfig({ MARKET_METRICS_TOKEN: TOKEN }, false, '0.0.0.0')).toEqual({ enabled: true, token: TOKEN });
    expect(readSkillServerMetricsConfig({ MARKET_METRICS_PORT: '9465' }, false, '10.0.0.5')).toEqual({
      enabled: true,
      listener: { host: '10.0.0.5', port: 9465 },
    });
    expect(readSkillServerMetricsConfig({ MARKET_METRICS: 'false' }, true, '127.0.0.1')).toEqual({ enabled: false });
    expect(() => readSkillServerMetricsConfig({ MARKET_METRICS_TOKEN: 'short' }, false, '0.0.0.0')).toThrow(
      /^MARKET_METRICS_TOKEN must be/,
    );
  });
});
