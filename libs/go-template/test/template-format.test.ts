/**
 * Golden tests of Go fmt formatting (printf verbs, flags, widths, bad-verb
 * strings), time values and the Ferry template helpers. Expected outputs are
 * Go's for the same template and data (checked against Go itself).
 */
import t from 'tap';
import { compileTemplate } from '../src/index.js';
import { fixture } from './fixture.js';

const render = (source: string, data: unknown = fixture()): string => compileTemplate(source, 't').execute(data);

/** [name, template, Go's output for fixture()] */
const golden: [string, string, string][] = [
  [
    'printf v s q d',
    '{{printf "%v|%s|%q|%d|%v|%+v" .Name .Name .Name .Num .Users .Meta}}',
    'alice|alice|"alice"|42|[map[Age:31 Name:bob Tags:[x y]] map[Age:27 Name:carol Tags:[]]]|map[a:one b:two c:three]',
  ],
  [
    'printf integer verbs',
    '{{printf "%x %X %o %O %b %#x %#o %#b %c %U %#U %q" 255 255 8 8 5 255 8 5 65 9731 9731 65}}',
    "ff FF 10 0o10 101 0xff 010 0b101 A U+2603 U+2603 '☃' 'A'",
  ],
  [
    'printf integer flags',
    '{{printf "[%5d][%-5d][%05d][%+d][% d][%.3d][%x][%8.3d]" 42 42 -42 42 42 7 -255 -5}}',
    '[   42][42   ][-0042][+42][ 42][007][-ff][    -005]',
  ],
  [
    'printf floats',
    '{{printf "%f %.2f %8.3f|%-8.2f|%e %E %g %G %.3g %+.1f % .2f" 3.14159 3.14159 3.14159 3.14159 1234.5678 0.000123 1e21 1e-7 1234.5678 2.25 1.5}}',
    '3.141590 3.14    3.142|3.14    |1.234568e+03 1.230000E-04 1e+21 1E-07 1.23e+03 +2.2  1.50',
  ],
  ['printf float rounding ties to even', '{{printf "%.2f %.0f %.0f %.2f %.1f %.3e" 0.125 2.5 3.5 0.375 0.05 1.0005}}', '0.12 2 4 0.38 0.1 1.000e+00'],
  [
    'printf float zero padding',
    '{{printf "%08.3f|%+08.2f|%-8.1f|%#g|%#.3g|%g" -3.14159 2.5 1.25 1.0 2.0 100000000.0}}',
    '-003.142|+0002.50|1.2     |1.00000|2.00|1e+08',
  ],
  ['printf special floats', '{{printf "%v %.2f %e" .Big .Small .Num}}', '1e+21 0.00 %!e(int=42)'],
  [
    'printf strings',
    '{{printf "[%5s][%-5s][%.2s][%x][% x][%X][%#q][%+q][%10.4q]" "ab" "ab" "abc" "hé" "hi" "hi" "a`b" "é" "hello"}}',
    '[   ab][ab   ][ab][68c3a9][68 69][6869]["a`b"]["\\u00e9"][    "hell"]',
  ],
  ['printf bool and nil', '{{printf "%t %v %v %d" true false .Nil .Nil}}', 'true false <nil> %!d(<nil>)'],
  [
    'printf types',
    '{{printf "%T %T %T %T %T %T %T %T" 1 1.5 "s" true .Errors .Meta .Nil .When}}',
    'int float64 string bool []interface {} map[string]interface {} <nil> time.Time',
  ],
  ['printf bad verbs', '{{printf "%d|%s|%z|%t" "x" 5 1 "no"}}', '%!d(string=x)|%!s(int=5)|%!z(int=1)|%!t(string=no)'],
  [
    'printf missing and extra',
    '{{printf "%d %d" 1}}|{{printf "%d" 1 2 "x"}}|{{printf "x" .Nil}}',
    '1 %!d(MISSING)|1%!(EXTRA int=2, string=x)|x%!(EXTRA <nil>)',
  ],
  ['printf percent and noverb', '{{printf "100%% sure"}}|{{printf "%d%" 5}}|{{printf "%6.2f%%" 99.5}}', '100% sure|5%!(NOVERB)| 99.50%'],
  ['printf star width', '{{printf "[%*d][%-*d][%.*f]" 5 42 4 7 2 3.14159}}', '[   42][7   ][3.14]'],
  [
    'printf collections',
    '{{printf "%s|%d|%q|%v|%x" .Errors .Matrix .Errors .WithNil .Errors}}',
    '[quota exceeded timeout]|[[1 2] [3 4]]|["quota exceeded" "timeout"]|[a <nil> 1]|[71756f7461206578636565646564 74696d656f7574]',
  ],
  ['printf time', '{{printf "%v|%s" .When .Midnight}}', '2024-03-05 14:07:09.12 +0000 UTC|2024-01-01 00:00:00 +0000 UTC'],
  ['printf unicode width', '{{printf "[%6s][%-6s]" "héé" "✓"}}', '[   héé][✓     ]'],
  ['time string', '{{.When}}|{{.Midnight}}', '2024-03-05 14:07:09.12 +0000 UTC|2024-01-01 00:00:00 +0000 UTC'],
  [
    'time format layouts',
    '{{.When.Format "2006-01-02T15:04:05.000Z07:00"}}|{{.When.Format "Jan 2, 2006 at 3:04pm (MST)"}}|{{.When.Format "Monday 02/01/06 15h04 .999 ,000000 -0700"}}',
    '2024-03-05T14:07:09.120Z|Mar 5, 2024 at 2:07pm (UTC)|Tuesday 05/03/24 14h07 .12 ,120000 +0000',
  ],
  [
    'time accessors',
    '{{.When.Year}} {{.When.Month}} {{.When.Day}} {{.When.Hour}}:{{.When.Minute}}:{{.When.Second}} {{.When.Weekday}} {{.When.YearDay}} {{.When.Unix}} {{.When.UnixMilli}}',
    '2024 March 5 14:7:9 Tuesday 65 1709647629 1709647629120',
  ],
  ['time month compares as int', '{{if eq .When.Month 3}}march{{end}} {{printf "%d %v" .When.Month .When.Month}}', 'march 3 March'],
  ['fromMillis', '{{fromMillis 1700000000123}}|{{(fromMillis 1700000000000).Format "2006-01-02 15:04"}}', '2023-11-14 22:13:20.123 +0000 UTC|2023-11-14 22:13'],
  [
    'fromNanos',
    '{{fromNanos 1700000000123456789}}|{{(fromNanos 1700000000123456789).Format "15:04:05.000000"}}|{{fromNanos 0}}',
    '2023-11-14 22:13:20.123456789 +0000 UTC|22:13:20.123456|1970-01-01 00:00:00 +0000 UTC',
  ],
  [
    'toJson',
    '{{toJson .Name}} {{toJson .Num}} {{toJson .Ratio}} {{toJson .Flag}} {{toJson .Nil}} {{toJson .Errors}} {{toJson .Meta}} {{toJson .Empty}}',
    '"alice" 42 0.75 true null ["quota exceeded","timeout"] {"a":"one","b":"two","c":"three"} []',
  ],
  [
    'toJson escaping',
    '{{toJson .Html}} {{toJson "a\\"b\\\\c\\nd\\te\\u2028"}} {{toJson .Unicode}}',
    '"\\u003ca href=\\"x\\"\\u003eTom \\u0026 \'Jerry\'\\u003c/a\\u003e" "a\\"b\\\\c\\nd\\te\\u2028" "héllo wörld ✓"',
  ],
  [
    'toJson nested and time',
    '{{toJson .Users}} {{toJson .When}} {{toJson .Big}} {{toJson .Small}} {{toJson 1e-7}} {{toJson 100.0}}',
    '[{"Age":31,"Name":"bob","Tags":["x","y"]},{"Age":27,"Name":"carol","Tags":[]}] "2024-03-05T14:07:09.12Z" 1e+21 0.00001234 1e-7 100',
  ],
  [
    'toJsonUnquoted',
    '"{{toJsonUnquoted .Html}}" "{{toJsonUnquoted "say \\"hi\\"\\n"}}" {{toJsonUnquoted .Num}} {{toJsonUnquoted .Errors}}',
    '"\\u003ca href=\\"x\\"\\u003eTom \\u0026 \'Jerry\'\\u003c/a\\u003e" "say \\"hi\\"\\n" 42 ["quota exceeded","timeout"]',
  ],
  ['toBase64', '{{toBase64 "alice:secret"}} {{toBase64 .Unicode}} [{{toBase64 ""}}]', 'YWxpY2U6c2VjcmV0 aMOpbGxvIHfDtnJsZCDinJM= []'],
  ['urlEscape', '{{urlEscape "a b/c?d=e&f+g@h~i"}} {{urlEscape .Unicode}}', 'a+b%2Fc%3Fd%3De%26f%2Bg%40h~i h%C3%A9llo+w%C3%B6rld+%E2%9C%93'],
  ['urlPathEscape', '{{urlPathEscape "a b/c?d=e&f+g@h~i;j,k"}}', 'a%20b%2Fc%3Fd=e&f+g@h~i%3Bj%2Ck'],
  [
    'pathBase pathDir pathExt',
    '{{pathBase .VirtualPath}}|{{pathDir .VirtualPath}}|{{pathExt .VirtualPath}}|{{pathBase "/"}}|{{pathBase ""}}|{{pathBase "a/b/"}}|{{pathDir "file"}}|{{pathDir "/a//b/../c/f"}}|{{pathDir ""}}|{{pathExt "a.tar.gz"}}|{{pathExt "a.b/c"}}',
    'report 2024.pdf|/dir one|.pdf|/|.|b|.|/a/c|.|.gz|',
  ],
  [
    'pathJoin variadic',
    '{{pathJoin "/a" "b/../c" "d"}}|{{pathJoin "a" "" "b/"}}|[{{pathJoin "" ""}}]|{{pathJoin "/" ".." "x"}}|{{pathJoin "a" "../.."}}',
    '/a/c/d|a/b|[]|/x|..',
  ],
  ['pathJoin with slices', '{{pathJoin (stringSlice "/users" .Name "in") .ObjectName}}', '/users/alice/in/report 2024.pdf'],
  ['stringJoin', '{{stringJoin .Errors ", "}}|{{stringJoin .Empty ","}}|{{stringJoin (stringSlice "a" "b") "/"}}', 'quota exceeded, timeout||a/b'],
  [
    'stringReplace',
    '{{stringReplace .VirtualPath " " "_"}}|{{stringReplace "aaa" "a" "bb"}}|{{stringReplace "ab" "" "-"}}',
    '/dir_one/report_2024.pdf|bbbbbb|-a-b-',
  ],
  ['stringContains', '{{stringContains .VirtualPath "report"}} {{stringContains .VirtualPath "nope"}} {{stringContains "x" ""}}', 'true false true'],
  [
    'string prefix suffix case',
    '{{stringHasPrefix .VirtualPath "/dir"}} {{stringHasSuffix .ObjectName ".pdf"}} {{stringTrimPrefix .VirtualPath "/dir one"}} {{stringTrimSuffix .ObjectName ".pdf"}} {{stringToUpper .Name}} {{stringToLower "ÀB"}}',
    'true true /report 2024.pdf report 2024 ALICE àb',
  ],
  [
    'slicesContains',
    '{{slicesContains .Errors "timeout"}} {{slicesContains .Errors "nope"}} {{slicesContains .Floats 100}} {{slicesContains .Floats 0.1}}',
    'true false true true',
  ],
  [
    'humanizeBytes',
    '{{humanizeBytes 0}} {{humanizeBytes 9}} {{humanizeBytes 10}} {{humanizeBytes 999}} {{humanizeBytes 1000}} {{humanizeBytes 1500}} {{humanizeBytes .FileSize}} {{humanizeBytes 9949}} {{humanizeBytes 9950}} {{humanizeBytes 1000000000}} {{humanizeBytes 1234567890123}}',
    '0 B 9 B 10 B 999 B 1.0 kB 1.5 kB 83 MB 9.9 kB 10 kB 1.0 GB 1.2 TB',
  ],
  [
    'humanizeBytes powers',
    '{{humanizeBytes 1000000}} {{humanizeBytes 1000000000000}} {{humanizeBytes 1000000000000000}} {{humanizeBytes 1000000000000000000}} {{humanizeBytes 999999}} {{humanizeBytes 99999}}',
    '1.0 MB 1.0 TB 1.0 PB 1.0 EB 1000 kB 100 kB',
  ],
  ['toHex', '{{toHex "hi é"}}', '686920c3a9'],
  [
    'http json body',
    '{\n  "user": {{toJson .Name}},\n  "action": {{toJson .Event}},\n  "path": {{toJson .VirtualPath}},\n  "size": {{.FileSize}},\n  "human": "{{humanizeBytes .FileSize}}",\n  "errors": [{{range $i, $e := .Errors}}{{if $i}}, {{end}}{{toJson $e}}{{end}}],\n  "meta": {{toJson .Meta}}\n}',
    '{\n  "user": "alice",\n  "action": "upload",\n  "path": "/dir one/report 2024.pdf",\n  "size": 82854982,\n  "human": "83 MB",\n  "errors": ["quota exceeded", "timeout"],\n  "meta": {"a":"one","b":"two","c":"three"}\n}',
  ],
  [
    'email subject and body',
    '{{- if eq .Status 1 -}}\nOK: {{.Name}} uploaded {{.ObjectName}} ({{humanizeBytes .FileSize}})\n{{- else -}}\nFAILED: {{stringJoin .Errors "; "}}\n{{- end}}\nElapsed: {{printf "%.1f" (printf "%d" .Elapsed | len)}}',
    'OK: alice uploaded report 2024.pdf (83 MB)\nElapsed: %!f(int=4)',
  ],
  [
    'path template',
    '/archive/{{.When.Format "2006/01/02"}}/{{.Name}}/{{pathBase .VirtualPath | urlPathEscape}}',
    '/archive/2024/03/05/alice/report%202024.pdf',
  ],
  ['printf mixed flags', '{{printf "%-08d|%+.2e|%.3v|%5t|%-7v|%q" 5 12345.678 3.14159 true .Nil "\\x00"}}', '5       |+1.23e+04|3.14| true|<nil>  |"\\x00"'],
  ['printf negative runes and bases', '{{printf "%c|%c|%U|%x|%o" 128512 -1 -1 -1 -8}}', '😀|�|U+FFFFFFFFFFFFFFFF|-1|-10'],
  ['number literal forms', '{{0x1p-2}} {{1e-7}} {{-0}} {{-0.0}} {{1_000.5}} {{0x_1F}} {{07_7}} {{0X1F}} {{1E3}}', '0.25 1e-07 0 -0 1000.5 31 63 31 1000'],
  [
    'printf %v float thresholds',
    '{{printf "%v %v %v" 1e-5 123456.0 1234567.0}} {{printf "%.0f %.1f %.10f" 0.5 0.25 0.1}}',
    '1e-05 123456 1.234567e+06 0 0.2 0.1000000000',
  ],
  ['printf small floats', '{{printf "%g %g %e" 0.0001 0.00001 0.0}} {{printf "%G" 1e-10}}', '0.0001 1e-05 0.000000e+00 1E-10'],
  [
    'printf hex strings and map keys',
    '{{printf "%v" .Keys}} {{printf "%x" "héllo"}} {{printf "% X" "hi"}} {{printf "%#x" "hi"}} {{printf "%# x" "hi"}}',
    'map[10:ten 9:nine B:upper b:lower z:zed é:e-acute] 68c3a96c6c6f 68 69 0x6869 0x68 0x69',
  ],
  ['printf rune widths and ASCII quoting', '{{printf "%3c|%-3c|%03d|%+q" 65 66 -5 "é✓"}}', '  A|B  |-05|"\\u00e9\\u2713"'],
  ['printf precision on unicode strings', '{{printf "%.2s|%.1q|%5.1s|" "héllo" "héllo" "✓✓"}}', 'hé|"h"|    ✓|'],
  ['printf bad verbs inside slices', '{{printf "%d %s" .Errors .Num}}', '[%!d(string=quota exceeded) %!d(string=timeout)] %!s(int=42)'],
  [
    'printf nested maps and float slices',
    '{{printf "%v|%v" .Nested .Floats}} {{printf "%.1f" .Floats}}',
    'map[Inner:map[Deep:value Nil:<nil>]]|[1.5 0.1 100] [1.5 0.1 %!f(int=100)]',
  ],
  ['printf %e and # flag', '{{printf "%e %.0e %#.0e %#.0f" 100.0 5.5 5.5 5.0}}', '1.000000e+02 6e+00 6.e+00 5.'],
  [
    'printf %q forms',
    '{{printf "%q" .Unicode}} {{printf "%+q" .Unicode}} {{printf "%#q" "a\\tb"}}',
    '"héllo wörld ✓" "h\\u00e9llo w\\u00f6rld \\u2713" `a\tb`',
  ],
  ['printf float width and sign', '{{printf "%5.1f|%-10.3e|%+g" -0.05 123456.789 1e100}}', ' -0.1|1.235e+05 |+1e+100'],
];

t.test('printf, time values and helpers render like Go', async (t) => {
  t.ok(golden.length >= 40, `golden table has ${golden.length} cases`);
  for (const [name, source, expected] of golden) {
    t.equal(render(source), expected, name);
  }
});
