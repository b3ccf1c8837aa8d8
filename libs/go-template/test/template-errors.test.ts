/**
 * Parse and execution errors: each must throw a TemplateError whose message
 * is exactly Go's (template: NAME:LINE: ... for parse errors, template:
 * NAME:LINE:COL: executing "NAME" at <node>: ... for execution errors, with
 * Go's byte columns).
 */
import t from 'tap';
import { compileTemplate, TemplateError } from '../src/index.js';
import { failure, fixture } from './fixture.js';

/** [name, template, phase, Go's error message, data (default: fixture())] */
const errors: [string, string, 'parse' | 'exec', string, unknown?][] = [
  ['unclosed action', 'Hello {{.Name', 'parse', 'template: t:1: unclosed action'],
  ['unclosed action multiline', 'line1\n{{if .Flag}}\n{{.Name\n', 'parse', 'template: t:4: unclosed action started at t:3'],
  ['missing leading dot', 'Hello {{Name}}', 'parse', 'template: t:1: function "Name" not defined'],
  ['undefined function', '{{nope .Name}}', 'parse', 'template: t:1: function "nope" not defined'],
  ['unexpected end', 'a{{end}}', 'parse', 'template: t:1: unexpected {{end}}'],
  ['unexpected else', '{{else}}', 'parse', 'template: t:1: unexpected {{else}}'],
  ['unterminated if', '{{if .Flag}}yes', 'parse', 'template: t:1: unexpected EOF'],
  ['undefined variable', '{{$x}}', 'parse', 'template: t:1: undefined variable "$x"'],
  ['variable out of scope', '{{with $x := 1}}{{end}}{{$x}}', 'parse', 'template: t:1: undefined variable "$x"'],
  ['break outside range', '{{break}}', 'parse', 'template: t:1: {{break}} outside {{range}}'],
  ['continue outside range', '{{if .Flag}}{{continue}}{{end}}', 'parse', 'template: t:1: {{continue}} outside {{range}}'],
  ['non executable pipeline stage', '{{.Name | "x"}}', 'parse', 'template: t:1: non executable command in pipeline stage 2'],
  ['unterminated string', '{{"abc}}', 'parse', 'template: t:1: unterminated quoted string'],
  ['unclosed comment', '{{/* x }}', 'parse', 'template: t:1: unclosed comment'],
  ['comment without delimiter', '{{/* x */ .Name}}', 'parse', 'template: t:1: comment ends before closing delimiter'],
  ['template name must be a string', '{{template .Name}}', 'parse', 'template: t:1: unexpected ".Name" in template clause'],
  ['unclosed paren', '{{(.Name}}', 'parse', 'template: t:1: unclosed left paren'],
  // Go 1.20+'s lexer reports a stray ")" before emitting it (lex_test.go "extra right paren");
  // older Go emitted it first and the parser said `unexpected ")" in command`.
  ['unexpected paren', '{{.Name)}}', 'parse', 'template: t:1: unexpected right paren'],
  ['multiple definition', '{{define "x"}}a{{end}}{{define "x"}}b{{end}}', 'parse', 'template: t:1: template: multiple definition of template "x"'],
  ['define vars do not leak', '{{$x := 1}}{{define "t2"}}{{$x}}{{end}}', 'parse', 'template: t:1: undefined variable "$x"'],
  ['empty command', '{{}}', 'parse', 'template: t:1: missing value for command'],
  ['missing value for if', '{{if}}x{{end}}', 'parse', 'template: t:1: missing value for if'],
  ['bad number', '{{3k}}', 'parse', 'template: t:1: bad number syntax: "3k"'],
  ['too many range variables', '{{range $a, $b, $c := .Errors}}{{end}}', 'parse', 'template: t:1: too many declarations in range'],
  ['dot after literal', '{{"x".Foo}}', 'parse', 'template: t:1: unexpected . after term "\\"x\\""'],
  ['bad character', '{{.Name#}}', 'parse', "template: t:1: bad character U+0023 '#'"],
  ['else with extra end', '{{if .Flag}}a{{else}}b{{else}}c{{end}}', 'parse', 'template: t:1: expected end; found {{else}}'],
  ['unexpected token in operand', '{{.Name := 3}}', 'parse', 'template: t:1: unexpected ":=" in operand'],
  ['nil pointer field', '{{.Nil.Field}}', 'exec', 'template: t:1:6: executing "t" at <.Nil.Field>: nil pointer evaluating interface {}.Field'],
  [
    'nil pointer nested',
    'x\n  {{.Nested.Inner.Nil.Deeper}}',
    'exec',
    'template: t:2:11: executing "t" at <.Nested.Inner.Nil.Deeper>: nil pointer evaluating interface {}.Deeper',
  ],
  [
    'nil pointer in range element',
    '{{range .WithNil}}{{.Foo}}{{end}}',
    'exec',
    'template: t:1:20: executing "t" at <.Foo>: can\'t evaluate field Foo in type interface {}',
  ],
  ['field of string', '{{.Name.First}}', 'exec', 'template: t:1:7: executing "t" at <.Name.First>: can\'t evaluate field First in type interface {}'],
  [
    'field of string variable',
    '{{$x := .Name}}{{$x.First}}',
    'exec',
    'template: t:1:19: executing "t" at <$x.First>: can\'t evaluate field First in type string',
  ],
  ['field of int root', '{{.Foo}}', 'exec', 'template: t:1:2: executing "t" at <.Foo>: can\'t evaluate field Foo in type int', 5],
  ['map key with arguments', '{{.Name 1}}', 'exec', 'template: t:1:2: executing "t" at <.Name>: Name is not a method but has arguments'],
  ['index out of range', '{{index .Errors 5}}', 'exec', 'template: t:1:2: executing "t" at <index .Errors 5>: error calling index: index out of range: 5'],
  [
    'index at length',
    '{{index .Errors 2}}',
    'exec',
    'template: t:1:2: executing "t" at <index .Errors 2>: error calling index: reflect: slice index out of range',
  ],
  ['index negative', '{{index .Errors -1}}', 'exec', 'template: t:1:2: executing "t" at <index .Errors -1>: error calling index: index out of range: -1'],
  ['index of nil', '{{index .Nil 0}}', 'exec', 'template: t:1:2: executing "t" at <index .Nil 0>: error calling index: index of untyped nil'],
  [
    'index map with int',
    '{{index .Meta 1}}',
    'exec',
    'template: t:1:2: executing "t" at <index .Meta 1>: error calling index: value has type int; should be string',
  ],
  ['index non-indexable', '{{index .Num 1}}', 'exec', 'template: t:1:2: executing "t" at <index .Num 1>: error calling index: can\'t index item of type int'],
  [
    'slice bad range',
    '{{slice .Errors 2 1}}',
    'exec',
    'template: t:1:2: executing "t" at <slice .Errors 2 1>: error calling slice: invalid slice index: 2 > 1',
  ],
  ['slice out of range', '{{slice "abc" 1 5}}', 'exec', 'template: t:1:2: executing "t" at <slice "abc" 1 5>: error calling slice: index out of range: 5'],
  ['wrong arg count fixed', '{{len}}', 'exec', 'template: t:1:2: executing "t" at <len>: wrong number of args for len: want 1 got 0'],
  ['wrong arg count too many', '{{len .Errors .Meta}}', 'exec', 'template: t:1:2: executing "t" at <len>: wrong number of args for len: want 1 got 2'],
  ['wrong arg count variadic', '{{printf}}', 'exec', 'template: t:1:2: executing "t" at <printf>: wrong number of args for printf: want at least 1 got 0'],
  [
    'wrong arg count helper',
    '{{stringReplace .Name "a"}}',
    'exec',
    'template: t:1:2: executing "t" at <stringReplace>: wrong number of args for stringReplace: want 3 got 2',
  ],
  [
    'wrong arg count via pipeline',
    '{{.Name | pathBase "x"}}',
    'exec',
    'template: t:1:10: executing "t" at <pathBase>: wrong number of args for pathBase: want 1 got 2',
  ],
  ['incompatible comparison', '{{lt .Name 1}}', 'exec', 'template: t:1:2: executing "t" at <lt .Name 1>: error calling lt: incompatible types for comparison'],
  ['eq incompatible', '{{eq .Num "42"}}', 'exec', 'template: t:1:2: executing "t" at <eq .Num "42">: error calling eq: incompatible types for comparison'],
  ['eq int float incompatible', '{{eq 1 1.0}}', 'exec', 'template: t:1:2: executing "t" at <eq 1 1.0>: error calling eq: incompatible types for comparison'],
  [
    'non-comparable',
    '{{eq .Errors .Errors}}',
    'exec',
    'template: t:1:2: executing "t" at <eq .Errors .Errors>: error calling eq: non-comparable type [quota exceeded timeout]: []interface {}',
  ],
  ['invalid comparison type', '{{lt true false}}', 'exec', 'template: t:1:2: executing "t" at <lt true false>: error calling lt: invalid type for comparison'],
  ['missing comparison argument', '{{eq 1}}', 'exec', 'template: t:1:2: executing "t" at <eq 1>: error calling eq: missing argument for comparison'],
  ['len of int', '{{len .Num}}', 'exec', 'template: t:1:2: executing "t" at <len .Num>: error calling len: len of type int'],
  ['len of nil', '{{len .Nil}}', 'exec', 'template: t:1:2: executing "t" at <len .Nil>: error calling len: len of nil pointer'],
  [
    'len of missing',
    '{{len .Nope}}',
    'exec',
    'template: t:1:2: executing "t" at <len .Nope>: error calling len: reflect: call of reflect.Value.Type on zero Value',
  ],
  ['range over string', '{{range .Name}}{{end}}', 'exec', 'template: t:1:8: executing "t" at <.Name>: range can\'t iterate over alice'],
  ['range over float', '{{range .Pi}}{{end}}', 'exec', 'template: t:1:8: executing "t" at <.Pi>: range can\'t iterate over 3.14159'],
  ['template not defined', '{{template "nope"}}', 'exec', 'template: t:1:11: executing "t" at <{{template "nope"}}>: template "nope" not defined'],
  [
    'error inside define names it',
    '{{define "x"}}{{.Nil.A}}{{end}}{{template "x" .}}',
    'exec',
    'template: t:1:20: executing "x" at <.Nil.A>: nil pointer evaluating interface {}.A',
  ],
  ['error column counts bytes', 'é✓{{.Nil.X}}', 'exec', 'template: t:1:11: executing "t" at <.Nil.X>: nil pointer evaluating interface {}.X'],
  ['wrong type for helper', '{{humanizeBytes .Name}}', 'exec', 'template: t:1:16: executing "t" at <.Name>: wrong type for value; expected int64; got string'],
  ['wrong literal type for helper', '{{toBase64 1}}', 'exec', 'template: t:1:11: executing "t" at <1>: expected string; found 1'],
  [
    'nil interface for string param',
    '{{toBase64 .Nil}}',
    'exec',
    'template: t:1:11: executing "t" at <.Nil>: wrong type for value; expected string; got interface {}',
  ],
  ['missing value for string param', '{{toBase64 .Nope}}', 'exec', 'template: t:1:11: executing "t" at <.Nope>: invalid value; expected string'],
  ['nil is not a command', '{{nil}}', 'exec', 'template: t:1:2: executing "t" at <nil>: nil is not a command'],
  ['argument to non-function', '{{1 2}}', 'exec', 'template: t:1:2: executing "t" at <1>: can\'t give argument to non-function 1'],
  ['argument to variable', '{{$ .Name}}', 'exec', 'template: t:1:2: executing "t" at <$>: can\'t give argument to non-function $'],
  ['call of non-function', '{{call .Name}}', 'exec', 'template: t:1:2: executing "t" at <call .Name>: error calling call: non-function of type string'],
  ['and without arguments', '{{and}}', 'exec', 'template: t:1:2: executing "t" at <and>: wrong number of args for and: want at least 1 got 0'],
  ['error stops output', 'before {{.Nil.X}} after', 'exec', 'template: t:1:13: executing "t" at <.Nil.X>: nil pointer evaluating interface {}.X'],
  ['percent in context', '{{printf "%d" .Nil.X}}', 'exec', 'template: t:1:18: executing "t" at <.Nil.X>: nil pointer evaluating interface {}.X'],
  ['trim marker needs a space', '{{-/* c */-}}', 'parse', 'template: t:1: illegal number syntax: "-"'],
  [
    'block redefined by define',
    '{{block "b" .}}default{{end}}{{define "b"}}override{{end}}',
    'parse',
    'template: t:1: template: multiple definition of template "b"',
  ],
  ['range over string literal', '{{range $i, $c := "abc"}}{{end}}', 'exec', 'template: t:1:18: executing "t" at <"abc">: range can\'t iterate over abc'],
];

t.test('errors match Go', async (t) => {
  t.ok(errors.length >= 60, `error table has ${errors.length} cases`);
  for (const [name, source, phase, message, ...rest] of errors) {
    const data = rest.length > 0 ? rest[0] : fixture();
    const err = failure(source, data);
    t.ok(err, `${name}: throws a TemplateError`);
    t.equal(err?.phase, phase, `${name}: fails at ${phase}`);
    t.equal(err?.message, message, `${name}: message`);
  }
});

t.test('errors of newer Go features and of the JS runtime', async (t) => {
  // Go 1.22: an integer range yields one value only.
  t.equal(failure('{{range $i, $v := 3}}{{end}}', {})?.message, 'template: t:1:18: executing "t" at <3>: can\'t use 3 to iterate over more than one variable');
  // JS runs out of stack before Go's depth limit; the error is Go's all the same.
  t.equal(
    failure('{{define "r"}}{{template "r" .}}{{end}}{{template "r" .}}', {})?.message,
    'template: t:1:25: executing "r" at <{{template "r" .}}>: exceeded maximum template depth (100000)',
  );
  // Cyclic data cannot be printed (Go would overflow its stack and crash).
  const cyclic: Record<string, unknown> = { A: 1 };
  cyclic.Self = cyclic;
  t.equal(failure('{{.}}', cyclic)?.message, 'template: t: execution exceeded the maximum call stack size');
  // Execution stops at the first error: no partial output is returned.
  const tpl = compileTemplate('a{{.X.Y}}b', 't');
  t.throws(() => tpl.execute({ X: null }), TemplateError);
  t.equal(tpl.execute({ X: { Y: '-' } }), 'a-b');
});
