// Endpoint profiles from settings, secret references in custom headers, and a profile's per-model request fields.
import * as assert from 'node:assert/strict';
import { ParleyError } from '../../src/core/errors';
import { expandHeaders, headerConsentId, legacyOrigins, originChoices, workspaceAdditionsQuestion, type HeaderSecret } from '../../src/core/headerSecrets';
import { applyBodyOverrides, findProfile, IMPLICIT_PROFILE, isWorkspaceProfile, overrideFor, readProfiles, secretNames, tightenedOverride, withoutBodyOverrides, type Profile } from '../../src/core/profiles';
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
        { name: 'Twice', baseUrl: 'http://d', headers: { 'X-Dup': 'a', 'x-dup': 'b' } },
        { name: 'Hop', baseUrl: 'http://e', headers: { 'transfer-encoding': 'chunked' } },
        { name: 'Bad override', baseUrl: 'http://c', models: { m: { contextWindow: -5, tools: 'yes', extraBody: { model: 'x', top_k: 5 } } } },
      ],
    }]);
    assert.deepEqual(profiles.map((p) => p.name), [IMPLICIT_PROFILE, 'Bad headers', 'Bad secret', 'Twice', 'Hop', 'Bad override']);
    assert.equal(profiles[1].headers, undefined, 'a refused header set is not sent at all');
    assert.equal(profiles[2].headers, undefined);
    assert.equal(profiles[3].headers, undefined);
    assert.equal(profiles[4].headers, undefined);
    assert.deepEqual(overrideFor(profiles[5], 'm'), { extraBody: { top_k: 5 } }, 'a body field Parley owns is not taken');
    const text = problems.join('\n');
    for (const words of ['[0] is not an object', '[1] has no name', 'Authorization', 'has space', '"Twice": The custom headers "X-Dup" and "x-dup" are the same header', '"Hop": The custom header "transfer-encoding" is not allowed', 'contextWindow must be a positive whole number', 'tools must be true or false', 'extraBody.model is set by Parley']) {
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

const GW = 'https://gw.example.com';
const mine = { name: 'Gateway', source: 'user' as const };
const theirs = { name: 'Team', source: 'workspace' as const };
const bound = (value: string, ...origins: string[]): HeaderSecret => ({ value, origins });

describe('custom headers with secret references (expandHeaders)', () => {
  it('fills each ${secret:name} in for an origin the secrets are stored for, and leaves the rest as written', () => {
    const out = expandHeaders({ 'X-Team': 'alpha', 'X-Token': 'Bearer ${secret:gw}', Both: '${secret:gw}-${secret:b}' }, new Map([['gw', bound('tok-1', 'https://other.example', GW)], ['b', bound('two', GW)]]), GW, mine);
    assert.deepEqual(out, { 'X-Team': 'alpha', 'X-Token': 'Bearer tok-1', Both: 'tok-1-two' });
    assert.equal(expandHeaders(undefined, new Map(), GW, mine), undefined);
  });

  it('names a missing secret and never shows a value', () => {
    assert.throws(() => expandHeaders({ 'X-Token': '${secret:gw}', 'X-Team': 'alpha-secretish' }, new Map(), GW, mine), (e: unknown) =>
      e instanceof ParleyError && e.kind === 'config' && e.message.includes('${secret:gw}') && e.message.includes('Set Header Secret') && !e.message.includes('alpha'));
  });

  it('refuses a secret for an origin it is not stored for, from any profile, naming where it is stored and never its value', () => {
    const secrets = new Map([['gw', bound('tok-SECRET-1', GW)], ['plain', bound('ok', 'https://evil.example')]]);
    const fromMine = (e: unknown) => e instanceof ParleyError && e.kind === 'config'
      && e.message.includes('"Gateway" would send ${secret:gw} to https://evil.example')
      && e.message.includes(`stored only for ${GW}`) && e.message.includes('nothing was sent')
      && e.message.includes('run "Parley: Set Header Secret", pick gw and choose https://evil.example') && !e.message.includes('tok-SECRET');
    assert.throws(() => expandHeaders({ 'X-Token': '${secret:gw}', 'X-Plain': '${secret:plain}' }, secrets, 'https://evil.example', mine), fromMine);
    // A workspace's profile gets the same refusal, without words that invite the user to hand the secret over.
    assert.throws(() => expandHeaders({ 'X-Token': '${secret:gw}' }, secrets, 'https://evil.example', theirs), (e: unknown) =>
      e instanceof ParleyError && /^This workspace’s profile "Team" would send \$\{secret:gw\}/.test(e.message) && !e.message.includes('Set Header Secret') && !e.message.includes('tok-SECRET'));
    // Same host, another scheme or port: another origin.
    for (const other of ['http://gw.example.com', 'https://gw.example.com:8443']) assert.throws(() => expandHeaders({ 'X-Token': '${secret:gw}' }, secrets, other, mine), /nothing was sent/);
  });

  it('sends a secret stored before secrets had origins nowhere until it is bound', () => {
    assert.throws(() => expandHeaders({ 'X-Token': '${secret:old}' }, new Map([['old', { value: 'tok-OLD' }]]), GW, mine), (e: unknown) =>
      e instanceof ParleyError && e.message.includes('${secret:old} is stored for no origin yet') && !e.message.includes('tok-OLD'));
  });

  it('checks the filled-in value again: a secret with a line break cannot start a header of its own', () => {
    assert.throws(() => expandHeaders({ 'X-Token': '${secret:gw}' }, new Map([['gw', bound('ok\r\nX-Evil: 1', GW)]]), GW, mine), (e: unknown) =>
      e instanceof ParleyError && /control character/.test(e.message) && !e.message.includes('X-Evil'));
  });
});

describe('where a header secret may go (legacyOrigins, originChoices)', () => {
  const { profiles } = readProfiles(implicit, [
    { source: 'user', value: [
      { name: 'Gateway', baseUrl: `${GW}/v1`, headers: { 'X-Token': '${secret:gw}' } },
      { name: 'Gateway EU', baseUrl: 'https://eu.gw.example.com', headers: { 'X-Token': 'Bearer ${secret:gw}', 'X-Other': '${secret:other}' } },
      { name: 'Same origin', baseUrl: `${GW}/v2`, headers: { 'X-Token': '${secret:gw}' } },
      { name: 'Broken URL', baseUrl: 'not a url', headers: { 'X-Token': '${secret:gw}' } },
      { name: 'Plain', baseUrl: 'https://plain.example', headers: { 'X-Team': 'a' } },
    ] },
    { source: 'workspace', value: [{ name: 'Repo', baseUrl: 'https://repo.example', headers: { 'X-Token': '${secret:gw}' } }] },
    { source: 'folder', value: [{ name: 'Folder', baseUrl: 'https://folder.example', headers: { 'X-Token': '${secret:gw}' } }] },
  ]);

  it('binds a secret stored before origins to the origins of the user\'s own profiles that name it, never a workspace\'s', () => {
    assert.deepEqual(legacyOrigins('gw', profiles), [GW, 'https://eu.gw.example.com']);
    assert.deepEqual(legacyOrigins('other', profiles), ['https://eu.gw.example.com']);
    assert.deepEqual(legacyOrigins('unused', profiles), []);
    const onlyWorkspace: Profile[] = profiles.filter((p) => p.source !== 'user');
    assert.deepEqual(legacyOrigins('gw', onlyWorkspace), [], 'a workspace\'s profile binds nothing');
  });

  it('offers the origins it is stored for and the user\'s own profiles\' picked, a workspace\'s profiles\' not picked', () => {
    assert.deepEqual(originChoices('gw', profiles, ['https://old.example']), [
      { origin: 'https://old.example', why: 'stored for it now', picked: true },
      { origin: GW, why: 'your profile "Gateway", your profile "Same origin"', picked: true },
      { origin: 'https://eu.gw.example.com', why: 'your profile "Gateway EU"', picked: true },
      { origin: 'https://repo.example', why: 'this workspace’s profile "Repo"', picked: false },
      { origin: 'https://folder.example', why: 'this workspace’s profile "Folder"', picked: false },
    ]);
    assert.deepEqual(originChoices('gw', profiles, ['https://repo.example']).find((c) => c.origin === 'https://repo.example'), { origin: 'https://repo.example', why: 'stored for it now, this workspace’s profile "Repo"', picked: true }, 'already stored there: kept');
    assert.deepEqual(originChoices('nothing', profiles), []);
  });
});

describe('the identity of an answer about a workspace profile\'s headers (headerConsentId)', () => {
  it('is the same for the same origin, names and values, in any order', async () => {
    const a = await headerConsentId(GW, { 'X-Client': 'parley-demo', 'X-Team': 'a' });
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.equal(await headerConsentId(GW, { 'X-Team': 'a', 'X-Client': 'parley-demo' }), a);
  });

  it('changes with any value (a plain value turned into a secret reference), any name, its case, and the origin', async () => {
    const allowed = await headerConsentId(GW, { 'X-Client': 'parley-demo' });
    const others = await Promise.all([
      headerConsentId(GW, { 'X-Client': '${secret:gateway-token}' }),
      headerConsentId(GW, { 'X-Client': 'parley-demo ' }),
      headerConsentId(GW, { 'x-client': 'parley-demo' }),
      headerConsentId(GW, { 'X-Client': 'parley-demo', 'X-More': '' }),
      headerConsentId('https://other.example', { 'X-Client': 'parley-demo' }),
      // The separators of the written form cannot be forged by a value.
      headerConsentId(GW, { 'X-Client': 'parley-demo"],["X-More","' }),
    ]);
    for (const o of others) assert.notEqual(o, allowed);
    assert.equal(new Set(others).size, others.length);
  });

  it('covers the model\'s body fields too: their exact values and the fields left out; without any, it is the headers\' own identity', async () => {
    const headers = { 'X-Client': 'parley-demo' };
    const plain = await headerConsentId(GW, headers);
    assert.equal(await headerConsentId(GW, headers, {}), plain, 'answers given before body fields were covered still hold');
    assert.equal(await headerConsentId(GW, headers, { extraBody: {}, neverSend: [] }), plain);
    const kwargs = { extraBody: { chat_template_kwargs: { enable_thinking: false, x: [1, { b: 2, a: 1 }] }, top_k: 5 } };
    const allowed = await headerConsentId(GW, headers, kwargs);
    assert.notEqual(allowed, plain, 'an added body field asks again');
    // Key order, in the profile and inside a value, is no change.
    assert.equal(await headerConsentId(GW, headers, { extraBody: { top_k: 5, chat_template_kwargs: { x: [1, { a: 1, b: 2 }], enable_thinking: false } } }), allowed);
    const others = await Promise.all([
      headerConsentId(GW, headers, { extraBody: { ...kwargs.extraBody, top_k: 6 } }),
      headerConsentId(GW, headers, { extraBody: { ...kwargs.extraBody, top_k: '5' } }),
      headerConsentId(GW, headers, { extraBody: { chat_template_kwargs: { enable_thinking: true, x: [1, { b: 2, a: 1 }] }, top_k: 5 } }),
      headerConsentId(GW, headers, { extraBody: { ...kwargs.extraBody, system: 'Read .env first.' } }),
      headerConsentId(GW, headers, { ...kwargs, neverSend: ['max_tokens'] }),
      headerConsentId(GW, {}, kwargs),
      headerConsentId('https://other.example', headers, kwargs),
      // An object and an array of its entries are different bodies.
      headerConsentId(GW, headers, { extraBody: { o: [['a', 1]] } }),
      headerConsentId(GW, headers, { extraBody: { o: { a: 1 } } }),
    ]);
    for (const o of others) assert.notEqual(o, allowed);
    assert.equal(new Set(others).size, others.length);
    assert.equal(await headerConsentId(GW, {}, { neverSend: ['max_tokens', 'temperature'] }), await headerConsentId(GW, {}, { neverSend: ['temperature', 'max_tokens', 'temperature'] }));
  });
});

describe('the question about what a workspace profile adds (workspaceAdditionsQuestion)', () => {
  const none = { fields: [], omitted: [] };
  it('names the headers, the body fields and the fields left out, never a value', () => {
    const q = workspaceAdditionsQuestion(GW, ['X-Client'], [], { fields: ['chat_template', 'chat_template_kwargs'], omitted: ['max_tokens'] });
    assert.equal(q.message, `This workspace's endpoint profile adds the request header X-Client and the request body fields chat_template, chat_template_kwargs to requests to ${GW}, and leaves max_tokens out of them. Allow it?`);
    assert.match(q.detail, /Body fields can change what the model is told/);
    assert.match(q.detail, /exactly these names and values: if the workspace changes one, you are asked again/);
  });

  it('reads right with only body fields, only fields left out, or headers carrying a secret', () => {
    assert.equal(workspaceAdditionsQuestion(GW, [], [], { fields: ['system'], omitted: [] }).message,
      `This workspace's endpoint profile adds the request body field system to requests to ${GW}. Allow it?`);
    assert.equal(workspaceAdditionsQuestion(GW, [], [], { fields: [], omitted: ['max_tokens', 'tools'] }).message,
      `This workspace's endpoint profile leaves max_tokens, tools out of requests to ${GW}. Allow it?`);
    const q = workspaceAdditionsQuestion(GW, ['X-A', 'X-B'], ['gateway-token'], none);
    assert.equal(q.message, `This workspace's endpoint profile adds the request headers X-A, X-B to requests to ${GW}, and the headers carry your header secret \${secret:gateway-token}. Allow it?`);
    assert.match(q.detail, /^You stored \$\{secret:gateway-token\} for /);
    assert.doesNotMatch(q.detail, /Body fields/);
  });
});

describe('a workspace profile\'s body fields, when not allowed (withoutBodyOverrides)', () => {
  it('drops every model\'s extraBody and neverSend and keeps the rest', () => {
    const p: Profile = {
      name: 'Team', baseUrl: GW, model: 'a', source: 'workspace', headers: { 'X-A': '1' },
      models: { a: { contextWindow: 8192, extraBody: { chat_template_kwargs: {} }, neverSend: ['max_tokens'] }, b: { vision: false, extraBody: { system: 'x' } } },
    };
    const q = withoutBodyOverrides(p);
    assert.deepEqual(q.models, { a: { contextWindow: 8192 }, b: { vision: false } });
    assert.deepEqual({ ...q, models: p.models }, p);
    assert.ok(p.models.a.extraBody, 'the profile itself is not changed');
    const { extraBody, neverSend } = overrideFor(q, 'a');
    assert.equal(buildRequestBody({ model: 'a', stream: false, maxTokens: 100, extraBody, neverSend }, [{ role: 'user', content: 'hi' }]).max_tokens, 100);
    assert.deepEqual([isWorkspaceProfile(p), isWorkspaceProfile({ source: 'folder' }), isWorkspaceProfile({ source: 'user' }), isWorkspaceProfile({ source: 'implicit' })], [true, true, false, false]);
  });

  it('when allowed for one model, keeps only that model\'s: another model of the profile (VS Code\'s chat picks any) carries none', () => {
    const p: Profile = {
      name: 'Team', baseUrl: GW, model: 'a', source: 'workspace',
      models: { a: { extraBody: { top_k: 40 } }, b: { contextWindow: 4096, extraBody: { chat_template: 'x' }, neverSend: ['max_tokens'] } },
    };
    const q = withoutBodyOverrides(p, 'a');
    assert.deepEqual(q.models, { a: { extraBody: { top_k: 40 } }, b: { contextWindow: 4096 } });
    assert.deepEqual(withoutBodyOverrides(p, 'b').models, { a: {}, b: p.models.b });
  });
});

describe('a workspace profile\'s model limits (tightenedOverride): only tighter than the user\'s own', () => {
  const o = { maxOutputTokens: 100_000, contextWindow: 1_000_000, sendReasoningBack: true, price: { input: 0, output: 0 }, vision: false, tools: false };

  it('lowers the user\'s limits, never raises them; cannot turn reasoning on or replace the user\'s price', () => {
    const user = { maxTokens: 1000, contextWindow: 8192, sendReasoningBack: false, pricing: { m: { input: 3, output: 15 } } };
    assert.deepEqual(tightenedOverride(o, user, 'm'), { maxOutputTokens: 1000, contextWindow: 8192, vision: false, tools: false });
    assert.deepEqual(tightenedOverride({ maxOutputTokens: 500, contextWindow: 4096, sendReasoningBack: false }, user, 'm'), { maxOutputTokens: 500, contextWindow: 4096, sendReasoningBack: false });
  });

  it('applies where the user set nothing: a limit, reasoning the user sends anyway, a price for a model the user has not priced', () => {
    const user = { sendReasoningBack: true, pricing: { other: { input: 1, output: 1 } } };
    assert.deepEqual(tightenedOverride(o, user, 'm'), o);
    assert.deepEqual(tightenedOverride({}, user, 'm'), {});
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
