/**
 * Rows of Go's text/template exec_test.go (execTests) that the JSON-like
 * data model can express: the same template over the same values (Go's
 * tVal fields as plain data: SI is []int{3, 4, 5}, MSI map[string]int...)
 * prints the same, and the rows Go marks as failing fail at execution.
 * Rows whose outcome depends on Go types JSON cannot carry (typed maps'
 * zero values, methods, channels, pointers) are left out.
 */
import t from 'tap';
import { compileTemplate, GoFloat, TemplateError } from '../src/index.js';

const tVal = {
  True: true,
  I: 17,
  X: 'x',
  U: { V: 'v' },
  FloatZero: new GoFloat(0),
  SI: [3, 4, 5],
  SIEmpty: [],
  SB: [true, false],
  MSI: { one: 1, two: 2, three: 3 },
  MSIone: { one: 1 },
  MSIEmpty: {},
  SMSI: [
    { one: 1, two: 2 },
    { eleven: 11, twelve: 12 },
  ],
  Empty0: null,
  Empty3: [7, 8],
};

/** [Go's row name, template, Go's output, data (default tVal)] */
const rows: [string, string, string, unknown?][] = [
  ['if true', '{{if true}}TRUE{{end}}', 'TRUE'],
  ['if false', '{{if false}}TRUE{{else}}FALSE{{end}}', 'FALSE'],
  ['if 1', '{{if 1}}NON-ZERO{{else}}ZERO{{end}}', 'NON-ZERO'],
  ['if 0', '{{if 0}}NON-ZERO{{else}}ZERO{{end}}', 'ZERO'],
  ['if 1.5', '{{if 1.5}}NON-ZERO{{else}}ZERO{{end}}', 'NON-ZERO'],
  ['if 0.0', '{{if .FloatZero}}NON-ZERO{{else}}ZERO{{end}}', 'ZERO'],
  ['if 1.5i', '{{if 1.5i}}NON-ZERO{{else}}ZERO{{end}}', 'NON-ZERO'],
  ['if 0.0i', '{{if 0i}}NON-ZERO{{else}}ZERO{{end}}', 'ZERO'],
  ['if emptystring', '{{if ``}}NON-EMPTY{{else}}EMPTY{{end}}', 'EMPTY'],
  ['if string', '{{if `notempty`}}NON-EMPTY{{else}}EMPTY{{end}}', 'NON-EMPTY'],
  ['if emptyslice', '{{if .SIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}', 'EMPTY'],
  ['if slice', '{{if .SI}}NON-EMPTY{{else}}EMPTY{{end}}', 'NON-EMPTY'],
  ['if emptymap', '{{if .MSIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}', 'EMPTY'],
  ['if map', '{{if .MSI}}NON-EMPTY{{else}}EMPTY{{end}}', 'NON-EMPTY'],
  ['if map unset', '{{if .MXI.none}}NON-ZERO{{else}}ZERO{{end}}', 'ZERO'],
  ['if map not unset', '{{if not .MXI.none}}ZERO{{else}}NON-ZERO{{end}}', 'ZERO'],
  ['if $x with $y int', '{{if $x := true}}{{with $y := .I}}{{$x}},{{$y}}{{end}}{{end}}', 'true,17'],
  ['if $x with $x int', '{{if $x := true}}{{with $x := .I}}{{$x}},{{end}}{{$x}}{{end}}', '17,true'],
  ['if else if', '{{if false}}FALSE{{else if true}}TRUE{{end}}', 'TRUE'],
  ['if else chain', '{{if eq 1 3}}1{{else if eq 2 3}}2{{else if eq 3 3}}3{{end}}', '3'],
  ['print', '{{print "hello, print"}}', 'hello, print'],
  ['print 123', '{{print 1 2 3}}', '1 2 3'],
  ['print nil', '{{print nil}}', '<nil>'],
  ['println', '{{println 1 2 3}}', '1 2 3\n'],
  ['printf int', '{{printf "%04x" 127}}', '007f'],
  ['printf float', '{{printf "%g" 3.5}}', '3.5'],
  ['printf complex', '{{printf "%g" 1+7i}}', '(1+7i)'],
  ['printf string', '{{printf "%s" "hello"}}', 'hello'],
  ['printf field', '{{printf "%s" .U.V}}', 'v'],
  ['printf dot', '{{with .I}}{{printf "%d" .}}{{end}}', '17'],
  ['printf var', '{{with $x := .I}}{{printf "%d" $x}}{{end}}', '17'],
  ['printf lots', '{{printf "%d %s %g" 127 "hello" 7-3i}}', '127 hello (7-3i)'],
  ['html', '{{html "<script>alert(\\"XSS\\");</script>"}}', '&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;'],
  ['html pipeline', '{{printf "<script>alert(\\"XSS\\");</script>" | html}}', '&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;'],
  ['js', '{{js .}}', "It\\'d be nice.", "It'd be nice."],
  ['urlquery', '{{"http://www.example.org/"|urlquery}}', 'http%3A%2F%2Fwww.example.org%2F'],
  ['not', '{{not true}} {{not false}}', 'false true'],
  ['and', '{{and false 0}} {{and 1 0}} {{and 0 true}} {{and 1 1}}', 'false 0 0 1'],
  ['or', '{{or 0 0}} {{or 1 0}} {{or 0 true}} {{or 1 1}}', '0 1 true 1'],
  ['boolean if', '{{if and true 1 `hi`}}TRUE{{else}}FALSE{{end}}', 'TRUE'],
  ['boolean if not', '{{if and true 1 `hi` | not}}TRUE{{else}}FALSE{{end}}', 'FALSE'],
  ['slice[0]', '{{index .SI 0}}', '3'],
  ['slice[1]', '{{index .SI 1}}', '4'],
  ['map[one]', '{{index .MSI `one`}}', '1'],
  ['map[two]', '{{index .MSI `two`}}', '2'],
  ['double index', '{{index .SMSI 1 `eleven`}}', '11'],
  ['len slice', '{{len .SI}}', '3'],
  ['len map', '{{len .MSI }}', '3'],
  ['with true', '{{with true}}{{.}}{{end}}', 'true'],
  ['with false', '{{with false}}{{.}}{{else}}FALSE{{end}}', 'FALSE'],
  ['with 1', '{{with 1}}{{.}}{{else}}ZERO{{end}}', '1'],
  ['with 0', '{{with 0}}{{.}}{{else}}ZERO{{end}}', 'ZERO'],
  ['with 1.5', '{{with 1.5}}{{.}}{{else}}ZERO{{end}}', '1.5'],
  ['with 0.0', '{{with .FloatZero}}{{.}}{{else}}ZERO{{end}}', 'ZERO'],
  ['with 1.5i', '{{with 1.5i}}{{.}}{{else}}ZERO{{end}}', '(0+1.5i)'],
  ['with 0.0i', '{{with 0i}}{{.}}{{else}}ZERO{{end}}', 'ZERO'],
  ['with emptystring', '{{with ``}}{{.}}{{else}}EMPTY{{end}}', 'EMPTY'],
  ['with string', '{{with `notempty`}}{{.}}{{else}}EMPTY{{end}}', 'notempty'],
  ['with emptyslice', '{{with .SIEmpty}}{{.}}{{else}}EMPTY{{end}}', 'EMPTY'],
  ['with slice', '{{with .SI}}{{.}}{{else}}EMPTY{{end}}', '[3 4 5]'],
  ['with emptymap', '{{with .MSIEmpty}}{{.}}{{else}}EMPTY{{end}}', 'EMPTY'],
  ['with map', '{{with .MSIone}}{{.}}{{else}}EMPTY{{end}}', 'map[one:1]'],
  ['with $x int', '{{with $x := .I}}{{$x}}{{end}}', '17'],
  ['with $x struct.U.V', '{{with $x := $}}{{$x.U.V}}{{end}}', 'v'],
  ['with variable and action', '{{with $x := $}}{{$y := $.U.V}}{{$y}}{{end}}', 'v'],
  ['range []int', '{{range .SI}}-{{.}}-{{end}}', '-3--4--5-'],
  ['range empty no else', '{{range .SIEmpty}}-{{.}}-{{end}}', ''],
  ['range []int else', '{{range .SI}}-{{.}}-{{else}}EMPTY{{end}}', '-3--4--5-'],
  ['range empty else', '{{range .SIEmpty}}-{{.}}-{{else}}EMPTY{{end}}', 'EMPTY'],
  ['range []bool', '{{range .SB}}-{{.}}-{{end}}', '-true--false-'],
  ['range map', '{{range .MSI}}-{{.}}-{{end}}', '-1--3--2-'],
  ['range empty map no else', '{{range .MSIEmpty}}-{{.}}-{{end}}', ''],
  ['range map else', '{{range .MSI}}-{{.}}-{{else}}EMPTY{{end}}', '-1--3--2-'],
  ['range empty map else', '{{range .MSIEmpty}}-{{.}}-{{else}}EMPTY{{end}}', 'EMPTY'],
  ['range empty interface', '{{range .Empty3}}-{{.}}-{{else}}EMPTY{{end}}', '-7--8-'],
  ['range empty nil', '{{range .Empty0}}-{{.}}-{{end}}', ''],
  ['range $x SI', '{{range $x := .SI}}<{{$x}}>{{end}}', '<3><4><5>'],
  ['range $x $y SI', '{{range $x, $y := .SI}}<{{$x}}={{$y}}>{{end}}', '<0=3><1=4><2=5>'],
  ['range $x MSIone', '{{range $x := .MSIone}}<{{$x}}>{{end}}', '<1>'],
  ['range $x $y MSIone', '{{range $x, $y := .MSIone}}<{{$x}}={{$y}}>{{end}}', '<one=1>'],
  ['declare in range', '{{range $x := .SI}}<{{$foo:=$x}}{{$x}}>{{end}}', '<3><4><5>'],
  ['or as if true', '{{or .SI "slice is empty"}}', '[3 4 5]'],
  ['or as if false', '{{or .SIEmpty "slice is empty"}}', 'slice is empty'],
  ['bug4', '{{if .Empty0}}non-nil{{else}}nil{{end}}', 'nil'],
  ['bug9', '{{.cause}}', 'neglect', { cause: 'neglect' }],
  ['bug12xe', '{{printf `%T` 0xef}}', 'int'],
  ['bug12xE', '{{printf `%T` 0xEE}}', 'int'],
  ['bug12Xe', '{{printf `%T` 0Xef}}', 'int'],
  ['bug12XE', '{{printf `%T` 0XEE}}', 'int'],
  ['bug16j', '{{1+2i|printf "%v"}}', '(1+2i)'],
  ['bug16k', '{{"aaa"|printf }}', 'aaa'],
  ['parens: $ in paren', '{{($).X}}', 'x'],
  ['ideal int', '{{printf "%T" 3}}', 'int'],
  ['ideal float', '{{printf "%T" 1.0}}', 'float64'],
  ['ideal exp float', '{{printf "%T" 1e1}}', 'float64'],
  ['ideal complex', '{{printf "%T" 1i}}', 'complex128'],
  ['ideal hex float', '{{printf "%T" 0x1p1}}', 'float64'],
  ['ideal rune', '{{printf "%T" \'a\'}}', 'int'],
];

t.test("rows of Go's execTests render the same", async (t) => {
  for (const [name, source, expected, data] of rows) {
    let got: string;
    try {
      got = compileTemplate(source, 't').execute(data === undefined ? tVal : data);
    } catch (e) {
      got = `error: ${(e as Error).message}`;
    }
    t.equal(got, expected, name);
  }
});

/** Rows Go's table marks as failing at execution: [name, template]. */
const failing: [string, string][] = [
  ['if nil', '{{if nil}}TRUE{{end}}'],
  ['slice[HUGE]', '{{index .SI 10}}'],
  ['slice[WRONG]', '{{index .SI `hello`}}'],
  ['slice[nil]', '{{index .SI nil}}'],
  ['map[nil]', '{{index .MSI nil}}'],
  ['map[WRONG]', '{{index .MSI 10}}'],
  ['nil[1]', '{{index nil 1}}'],
  ['len of int', '{{len 3}}'],
  ['len of nothing', '{{len .Empty0}}'],
  ['call nil', '{{call nil}}'],
  ['bug7a', '{{3 2}}'],
  ['bug7b', '{{$x := 1}}{{$x 2}}'],
  ['bug7c', '{{$x := 1}}{{3 | $x}}'],
  ['bug14a', '{{(nil).True}}'],
  ['bug14b', '{{$x := nil}}{{$x.anything}}'],
  ['bug14c', '{{$x := (1.0)}}{{$y := ("hello")}}{{$x.anything}}{{$y.true}}'],
  ['bug16a', '{{true|printf}}'],
  ['bug16b', '{{1|printf}}'],
  ['bug16c', '{{1.1|printf}}'],
  ['bug16d', "{{'x'|printf}}"],
  ['bug16e', '{{0i|printf}}'],
  ['ideal too big', '{{printf "%T" 18446744073709551615}}'],
];

t.test("rows Go's execTests mark as failing fail at execution", async (t) => {
  for (const [name, source] of failing) {
    let err: unknown;
    try {
      compileTemplate(source, 't').execute(tVal);
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof TemplateError && err.phase === 'exec', `${name}: ${(err as Error | undefined)?.message}`);
  }
});
