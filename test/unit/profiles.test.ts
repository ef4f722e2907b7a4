// Endpoint profiles from settings, secret references in custom headers, and a profile's per-model request fields.
import * as assert from 'node:assert/strict';
import { ParleyError } from '../../src/core/errors';
import { applyBodyOverrides, expandHeaders, findProfile, IMPLICIT_PROFILE, overrideFor, readProfiles, secretNames } from '../../src/core/profiles';
import { buildRequestBody } from '../../src/core/request';

const implicit = { baseUrl: 'https://api.openai.com', model: 'gpt-4o-mini' };

describe('endpoint profiles (readProfiles)', () => {
  it('keeps the old parley.baseUrl and parley.model as the Default profile, first', () => {
    const { profiles, problems } = readProfiles(implicit, []);
    assert.deepEqual(problems, []);
    assert.equal(profiles.length, 1);
    assert.deepEqual(profiles[0], { name: IMPLICIT_PROFILE, baseUrl: implicit.baseUrl, model: 'gpt-4o-mini', models: {}, source: 'implicit' });
    assert.equal(findProfile(profiles, '').name, IMPLICIT_PROFILE, 'no active name: the first profile');
    assert.equal(findProfile(profiles, 'gone').name, IMPLICIT_PROFILE, 'an unknown name: the first profile');
  });

  it('reads named profiles in order, with headers and per-model overrides', () => {
    const { profiles, problems } = readProfiles(implicit, [{
      source: 'user',
      value: [
        { name: 'Local', baseUrl: 'http://localhost:11434', model: 'llama3.2', models: { 'llama3.2': { contextWindow: 8192, maxOutputTokens: 1024, vision: false, price: { input: 0, output: 0 } } } },
        { name: 'Gateway', baseUrl: 'https://gw.example.com/v1', model: 'gpt-4o', headers: { 'X-Team': 'alpha', 'X-Token': '${secret:gw-token}' } },
      ],
    }]);
    assert.deepEqual(problems, []);
    assert.deepEqual(profiles.map((p) => p.name), [IMPLICIT_PROFILE, 'Local', 'Gateway']);
    assert.deepEqual(overrideFor(profiles[1], 'llama3.2'), { contextWindow: 8192, maxOutputTokens: 1024, vision: false, price: { input: 0, output: 0 } });
    assert.deepEqual(overrideFor(profiles[1], 'other'), {});
    assert.deepEqual(secretNames(profiles[2].headers), ['gw-token']);
  });

  it('refuses what it cannot use, in words, and keeps the rest', () => {
    const { profiles, problems } = readProfiles(implicit, [{
      source: 'user',
      value: [
        'not an object',
        { baseUrl: 'http://x' },
        { name: 'Bad headers', baseUrl: 'http://a', headers: { Authorization: 'Bearer x' } },
        { name: 'Bad secret', baseUrl: 'http://b', headers: { 'X-T': '${secret:has space}' } },
        { name: 'Bad override', baseUrl: 'http://c', models: { m: { contextWindow: -5, tools: 'yes', extraBody: { model: 'x', top_k: 5 } } } },
      ],
    }]);
    assert.deepEqual(profiles.map((p) => p.name), [IMPLICIT_PROFILE, 'Bad headers', 'Bad secret', 'Bad override']);
    assert.equal(profiles[1].headers, undefined, 'a refused header set is not sent at all');
    assert.equal(profiles[2].headers, undefined);
    assert.deepEqual(overrideFor(profiles[3], 'm'), { extraBody: { top_k: 5 } }, 'a body field Parley owns is not taken');
    const text = problems.join('\n');
    for (const words of ['[0] is not an object', '[1] has no name', 'Authorization', 'has space', 'contextWindow must be a positive whole number', 'tools must be true or false', 'extraBody.model is set by Parley']) {
      assert.ok(text.includes(words), `problems mention ${words}: ${text}`);
    }
    assert.ok(!text.includes('Bearer x'), 'a header value never appears in a problem');
  });

  it('a named profile called Default replaces the implicit one; a workspace profile wins over a user one of the same name', () => {
    const { profiles } = readProfiles(implicit, [
      { source: 'user', value: [{ name: 'Default', baseUrl: 'http://mine' }, { name: 'Shared', baseUrl: 'http://user' }] },
      { source: 'workspace', value: [{ name: 'Shared', baseUrl: 'http://workspace' }] },
    ]);
    assert.deepEqual(profiles.map((p) => [p.name, p.baseUrl, p.source]), [['Default', 'http://mine', 'user'], ['Shared', 'http://workspace', 'workspace']]);
  });

  it('a list that is not a list is refused with its source named', () => {
    const { profiles, problems } = readProfiles(implicit, [{ source: 'workspace', value: { name: 'x' } }]);
    assert.equal(profiles.length, 1);
    assert.match(problems[0], /workspace settings\) must be a list/);
  });
});

describe('custom headers with secret references (expandHeaders)', () => {
  it('fills each ${secret:name} in and leaves the rest as written', () => {
    const out = expandHeaders({ 'X-Team': 'alpha', 'X-Token': 'Bearer ${secret:gw}', Both: '${secret:gw}-${secret:b}' }, new Map([['gw', 'tok-1'], ['b', 'two']]));
    assert.deepEqual(out, { 'X-Team': 'alpha', 'X-Token': 'Bearer tok-1', Both: 'tok-1-two' });
    assert.equal(expandHeaders(undefined, new Map()), undefined);
  });

  it('names a missing secret and never shows a value', () => {
    assert.throws(() => expandHeaders({ 'X-Token': '${secret:gw}', 'X-Team': 'alpha-secretish' }, new Map()), (e: unknown) =>
      e instanceof ParleyError && e.kind === 'config' && e.message.includes('${secret:gw}') && e.message.includes('Set Header Secret') && !e.message.includes('alpha'));
  });

  it('checks the filled-in value again: a secret with a line break cannot start a header of its own', () => {
    assert.throws(() => expandHeaders({ 'X-Token': '${secret:gw}' }, new Map([['gw', 'ok\r\nX-Evil: 1']])), (e: unknown) =>
      e instanceof ParleyError && /control character/.test(e.message) && !e.message.includes('X-Evil'));
  });
});

describe('per-model request fields (extraBody, neverSend)', () => {
  it('adds extra fields without replacing Parley\'s own, and removes the never-sent ones', () => {
    const body = applyBodyOverrides({ model: 'm', messages: [], stream: true, temperature: 0.2 }, { extraBody: { top_k: 40, temperature: 1.5, options: { num_ctx: 8192 } }, neverSend: ['temperature'] });
    assert.deepEqual(body, { model: 'm', messages: [], stream: true, top_k: 40, options: { num_ctx: 8192 } });
  });

  it('buildRequestBody applies them to the body it builds', () => {
    const body = buildRequestBody({ model: 'm', stream: true, temperature: 0.3, extraBody: { top_k: 5 }, neverSend: ['stream_options'] }, [{ role: 'user', content: 'hi' }]);
    assert.equal(body.top_k, 5);
    assert.equal(body.temperature, 0.3);
    assert.equal('stream_options' in body, false);
  });

  it('a parameter the server refused stays dropped, even when extraBody sets it', () => {
    const settings = { model: 'm', stream: false, temperature: 0.3, extraBody: { temperature: 1.5, top_k: 5 } };
    const body = buildRequestBody(settings, [{ role: 'user', content: 'hi' }], { drop: ['temperature'] });
    assert.equal('temperature' in body, false);
    assert.equal(body.top_k, 5);
  });
});
