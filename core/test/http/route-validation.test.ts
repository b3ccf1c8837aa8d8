import t from 'tap';
import Joi from 'joi';
import Hapi, { type ServerRoute } from '@hapi/hapi';
import { bindRouteValidation, REMEMBERED_INPUTS, routeSchema } from '../../src/http/route-validation.js';
import { validationFailAction } from '../../src/http/errors.js';

// bindRouteValidation (core/src/http/route-validation.ts): each joi schema of
// a route becomes a function with the server's validation options bound once.
// What a request sees must not change: a bare Hapi server with the schemas as
// they are and one with them bound answer every input alike.

const routes = (): ServerRoute[] => [
  {
    method: 'POST',
    path: '/things/{name}',
    options: {
      validate: {
        params: Joi.object({ name: Joi.string().max(8).required() }),
        query: Joi.object({ n: Joi.number().integer().min(1).default(5), flag: Joi.boolean() }),
        payload: Joi.object({ a: Joi.string().required(), nested: Joi.object({ b: Joi.number() }), list: Joi.array().items(Joi.object({ c: Joi.string() })) }),
      },
    },
    handler: (request) => ({ params: request.params, query: request.query, payload: request.payload }),
  },
  { method: 'GET', path: '/free', handler: () => 'ok' },
];

async function server(bound: boolean): Promise<Hapi.Server> {
  const s = Hapi.server({
    routes: {
      validate: {
        failAction: validationFailAction,
        options: { abortEarly: true, errors: { wrap: { label: '"' } }, stripUnknown: { objects: true, arrays: false } },
      },
    },
  });
  s.route(bound ? bindRouteValidation(routes()) : routes());
  await s.initialize();
  return s;
}

t.test('the same answers with the schemas bound', async (t) => {
  const plain = await server(false);
  const bound = await server(true);
  const inputs: [string, unknown][] = [
    ['/things/abc?n=3&flag=true', { a: 'x', nested: { b: 1, extra: 2 }, list: [{ c: 'y', d: 1 }], unknown: 1 }],
    ['/things/abc', { a: 'x' }],
    ['/things/abcdefghij', { a: 'x' }],
    ['/things/abc?n=0', { a: 'x' }],
    ['/things/abc?n=two', { a: 'x' }],
    ['/things/abc', { nested: { b: 'no' } }],
    ['/things/abc', { a: 1 }],
    ['/things/abc', { a: 'x', nested: { b: 'NaN' } }],
    ['/things/abc?flag=maybe', { a: 'x' }],
  ];
  for (const [url, payload] of inputs) {
    const a = await plain.inject({ method: 'POST', url, payload: payload as object });
    const b = await bound.inject({ method: 'POST', url, payload: payload as object });
    t.equal(b.statusCode, a.statusCode, `${url} ${JSON.stringify(payload)}: status ${a.statusCode}`);
    t.same(JSON.parse(b.payload), JSON.parse(a.payload), 'same body');
  }
  const ok = await bound.inject({ method: 'POST', url: '/things/abc', payload: { a: 'x', nested: { b: 1, extra: 2 }, unknown: 1 } });
  t.same(
    JSON.parse(ok.payload),
    { params: { name: 'abc' }, query: { n: 5 }, payload: { a: 'x', nested: { b: 1 } } },
    'defaults applied, unknown members dropped',
  );
  const bad = await bound.inject({ method: 'POST', url: '/things/abc?n=0', payload: { a: 'x' } });
  t.match(JSON.parse(bad.payload), { message: '"n" must be greater than or equal to 1' }, 'the field named in quotes');
});

t.test('what is not a joi schema', async (t) => {
  const fn = async (v: unknown) => v;
  const r = bindRouteValidation([{ method: 'GET', path: '/f', options: { validate: { query: fn } }, handler: () => 'x' }]);
  t.equal((r[0]!.options as { validate: { query: unknown } }).validate.query, fn, 'a function is left as it is');
  t.same(bindRouteValidation([{ method: 'GET', path: '/g', handler: () => 'x' }]).length, 1, 'a route without validation');
  t.throws(
    () => bindRouteValidation([{ method: 'GET', path: '/h', options: { validate: { query: { a: Joi.string() } as never } }, handler: () => 'x' }]),
    /GET \/h: validate.query is not a joi schema/,
    'a plain object (Hapi would compile it without the options) is refused at start',
  );
  const twice = routes();
  bindRouteValidation(twice);
  const first = (twice[0]!.options as { validate: { params: unknown } }).validate.params;
  bindRouteValidation(twice);
  t.equal((twice[0]!.options as { validate: { params: unknown } }).validate.params, first, 'binding twice (a second binding) changes nothing');
  const schema = routeSchema(first);
  t.ok(schema && Joi.isSchema(schema), 'the bound validator keeps its schema (the OpenAPI document reads it)');
  t.same(Object.keys((schema!.describe() as { keys: object }).keys), ['name']);
  t.equal(routeSchema(fn), undefined, 'a function of its own has none');
  const plain = Joi.string();
  t.equal(routeSchema(plain), plain, 'a schema is its own');
});

t.test('valid params and queries are remembered: the same answer, a value of its own each time', async (t) => {
  let customCalls = 0;
  const counted = Joi.string().custom((v: string) => {
    customCalls++;
    return v.toUpperCase();
  });
  const [route] = bindRouteValidation([
    {
      method: 'GET',
      path: '/r/{name}',
      options: {
        validate: {
          params: Joi.object({ name: counted.required() }),
          query: Joi.object({ n: Joi.number().integer().default(5), flag: Joi.boolean().truthy('1'), list: Joi.array().items(Joi.string()).single() }),
          payload: Joi.object({ a: counted }),
        },
      },
      handler: () => 'x',
    },
  ]);
  const v = (route!.options as { validate: Record<'params' | 'query' | 'payload', (value: unknown) => unknown> }).validate;
  const first = v.params({ name: 'abc' }) as { name: string };
  t.same(first, { name: 'ABC' });
  (first as { name: string }).name = 'changed by a handler';
  const again = v.params({ name: 'abc' });
  t.same(again, { name: 'ABC' }, 'the same value again, untouched by what a handler did to the first');
  t.not(again, first, 'a value of its own');
  t.equal(customCalls, 1, 'joi ran once for the same input');
  v.params({ name: 'abd' });
  t.equal(customCalls, 2, 'another input is validated');

  t.throws(() => v.params({ name: 5 }), /"name" must be a string/, "a failure is joi's error");
  t.throws(() => v.params({ name: 5 }), /"name" must be a string/, 'every time (failures are not kept)');

  t.same(v.query({ flag: '1' }), { n: 5, flag: true }, 'defaults and conversions');
  t.same(v.query({ flag: '1' }), { n: 5, flag: true }, 'the same when remembered');
  t.throws(() => v.query({ n: 'two' }), /"n" must be a number/);
  const list = v.query({ list: 'a' }) as { list: string[] };
  t.same(list, { n: 5, list: ['a'] });
  list.list.push('b');
  t.same(v.query({ list: 'a' }), { n: 5, list: ['a'] }, 'a value holding an array is validated again, not shared');

  v.payload({ a: 'x' });
  v.payload({ a: 'x' });
  t.equal(customCalls, 4, 'payloads are always validated');

  for (let i = 0; i < REMEMBERED_INPUTS + 10; i++) v.params({ name: `n${i}` });
  const calls = customCalls;
  v.params({ name: 'abc' });
  t.equal(customCalls, calls + 1, 'the oldest inputs are forgotten past REMEMBERED_INPUTS');
  v.params({ name: `n${REMEMBERED_INPUTS + 9}` });
  t.equal(customCalls, calls + 1, 'a recent one is still remembered');
});
