import { compileTemplate, TemplateError } from '../src/index.js';

/** Event data in the shape the event manager passes to templates (shared by the golden tests). */
export function fixture(): Record<string, unknown> {
  return {
    Name: 'alice',
    Event: 'upload',
    Status: 1,
    FileSize: 82854982,
    Elapsed: 1532,
    VirtualPath: '/dir one/report 2024.pdf',
    ObjectName: 'report 2024.pdf',
    Protocol: 'SFTP',
    Errors: ['quota exceeded', 'timeout'],
    Empty: [],
    EmptyMap: {},
    Nil: null,
    Zero: 0,
    EmptyStr: '',
    Ratio: 0.75,
    Pi: 3.14159,
    Big: 1e21,
    Small: 0.00001234,
    Num: 42,
    Neg: -7,
    When: new Date('2024-03-05T14:07:09.120Z'),
    Midnight: new Date('2024-01-01T00:00:00Z'),
    Meta: { b: 'two', a: 'one', c: 'three' },
    Keys: { '10': 'ten', '9': 'nine', b: 'lower', B: 'upper', é: 'e-acute', z: 'zed' },
    Users: [
      { Name: 'bob', Age: 31, Tags: ['x', 'y'] },
      { Name: 'carol', Age: 27, Tags: [] },
    ],
    Nested: { Inner: { Deep: 'value', Nil: null } },
    Html: `<a href="x">Tom & 'Jerry'</a>`,
    Unicode: 'héllo wörld ✓',
    Flag: true,
    Off: false,
    Matrix: [
      [1, 2],
      [3, 4],
    ],
    WithNil: ['a', null, 1],
    Floats: [1.5, 0.1, 100],
    Tree: { Name: 'root', Children: [{ Name: 'a', Children: [{ Name: 'a1' }, { Name: 'a2' }] }, { Name: 'b' }] },
  };
}

/** The TemplateError a template fails with (parse or execution, template name "t"), or undefined when it renders. */
export function failure(source: string, data: unknown = {}): TemplateError | undefined {
  try {
    compileTemplate(source, 't').execute(data);
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
  return undefined;
}
