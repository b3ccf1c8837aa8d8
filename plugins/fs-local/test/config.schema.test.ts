import t from 'tap';
import { localFsProvider, osFsConfigSchema } from '../src/index.js';
import manifest from '../src/index.js';

t.test('accepted options', async (t) => {
  t.same(osFsConfigSchema.validate({}).value, { read_buffer_size: 0, write_buffer_size: 0 }, 'defaults to 0 (backend default)');
  t.same(osFsConfigSchema.validate({ read_buffer_size: 10, write_buffer_size: 1 }).error, undefined, 'bounds accepted');
  t.equal(localFsProvider.optionsSchema, osFsConfigSchema, 'the provider validates with it');
});

t.test('refused options', async (t) => {
  const refusals: [unknown, RegExp][] = [
    [{ read_buffer_size: -1 }, /read_buffer_size.*between 0 and 10 MiB/],
    [{ read_buffer_size: 11 }, /read_buffer_size.*between 0 and 10 MiB.*got 11/],
    [{ write_buffer_size: 1.5 }, /write_buffer_size.*whole number.*1\.5/],
    [{ write_buffer_size: 'big' }, /write_buffer_size must be a whole number of MiB/],
    [{ write_buffer_size: null }, /write_buffer_size must be a whole number of MiB/],
    [{ buffer: 1 }, /buffer.*is not an osconfig option/],
  ];
  for (const [value, message] of refusals) {
    const { error } = osFsConfigSchema.validate(value, { abortEarly: false });
    t.match(error?.message, message, `${JSON.stringify(value)} refused: ${error?.message}`);
  }
});

t.test('plugin config', async (t) => {
  t.equal(manifest.configSchema?.validate({}).error, undefined, 'an empty object is fine');
  t.match(manifest.configSchema?.validate({ root: '/x' }).error?.message, /not a setting of @ferry\/fs-local/);
});
