#!/usr/bin/env bash
# End-to-end tests of `carve report`: the comparison fixture
# (tests/data/report/compare.json, the old {"baseline", "carve"} shape), the
# four-model fixture of the current shape (tests/data/report/runs.json:
# {"settings", "runs"}; settings, one column per model, the trace's end
# marked on every time chart) and one run of the first from standard input
# rendered to HTML; the page refers to nothing outside itself (no URL but
# the SVG namespace, no script, no link); every chart carries data; exit
# codes (0 ok, 1 bad input or write failure, 2 usage) and no page left
# behind on failure.  Then, when Debian's `chromium` is installed, the page
# is opened headless (as root: --no-sandbox; no display needed):
#   - a screenshot, kept as $ARTIFACTS/report.png (ARTIFACTS =
#     ${CARVE_ARTIFACTS:-the third argument}), must be a non-trivial PNG;
#   - the DOM after rendering (--dump-dom) must hold the 12 charts, each with
#     a series whose data-points > 0;
#   - no console message: chromium run with --enable-logging=stderr --v=0
#     logs every console message (errors, uncaught exceptions, SVG attribute
#     errors) as a "CONSOLE" line on stderr; the detector is first run on a
#     page with deliberate errors and must fire there.
# Without chromium the browser part prints SKIP.
# Usage: report.sh CARVE_BINARY SOURCE_DIR [ARTIFACT_DIR]
set -u
carve=$1
src=$2
cd "$src" || exit 1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
art=${CARVE_ARTIFACTS:-${3:-$tmp/artifacts}}
fixture=tests/data/report/compare.json
runs_fixture=tests/data/report/runs.json
charts_expected=12   # per run: 3 pools, quota stacked, quota average, wait CDF
runs_charts=24       # four models
fail=0
pass=0

check() { # name, condition result
	if [ "$2" -eq 0 ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $1"
		fail=$((fail + 1))
	fi
}

# charts FILE: "N M", N charts (<svg class="chart">) of which M have a
# series with data-points > 0.
charts() {
	awk 'BEGIN { RS = "<svg " }
	     NR > 1 && /^class="chart"/ {
		n++
		if ($0 ~ /class="series"[^>]*data-points="[1-9]/) d++
	     }
	     END { print n + 0, d + 0 }' "$1"
}

# self_contained FILE: true when the page loads nothing from outside.
self_contained() {
	! sed 's|xmlns="http://www.w3.org/2000/svg"||g' "$1" |
		grep -Eiq 'http|<script|<link|<img|<iframe|@import|url\(|src='
}

# ---- carve report, no browser ----------------------------------------------

"$carve" report "$fixture" -o "$tmp/compare.html" 2>"$tmp/err"
check "report of the compare fixture exits 0" $?
[ -s "$tmp/compare.html" ] && [ ! -s "$tmp/err" ]
check "report written, stderr empty" $?
self_contained "$tmp/compare.html"
check "compare page refers to nothing outside itself" $?
grep -q '<th>baseline</th><th>carve</th><th>difference</th>' "$tmp/compare.html"
check "compare page has the side-by-side table" $?
[ "$(charts "$tmp/compare.html")" = "$charts_expected $charts_expected" ]
ok=$?   # before the message runs commands of its own
check "compare page: $charts_expected charts, each with data (got $(charts "$tmp/compare.html"))" $ok

"$carve" report "$runs_fixture" -o "$tmp/runs.html" 2>"$tmp/err"
check "report of the four-model fixture exits 0" $?
self_contained "$tmp/runs.html"
check "runs page refers to nothing outside itself" $?
[ "$(charts "$tmp/runs.html")" = "$runs_charts $runs_charts" ]
ok=$?
check "runs page: $runs_charts charts, each with data (got $(charts "$tmp/runs.html"))" $ok
grep -q '<th>carve</th><th>exclusive</th><th>device-plugin</th><th>kueue</th><th>carve vs the best baseline</th>' "$tmp/runs.html"
check "runs page: one column per model, carve first, the difference column" $?
grep -q '<h2>Settings</h2>' "$tmp/runs.html" && grep -q '<tr><th>window</th><td>0 s to 7.0 d' "$tmp/runs.html"
check "runs page: the settings table with the window" $?
[ "$(grep -c 'class="window-end"' "$tmp/runs.html")" -eq 16 ]
check "runs page: the trace's end marked on each pool and quota chart (16)" $?
# One time axis: every time chart of every model ends at the same tick
# (the longest run, exclusive's 2.5 x 7 days: 17.5 days).
[ "$(grep -c 'time (days)' "$tmp/runs.html")" -eq 16 ] &&
	[ "$(grep -o 'text-anchor="middle">1[0-9]</text>' "$tmp/runs.html" | sort | uniq -c | awk '{print $1}' | sort -u)" = 16 ]
check "runs page: one shared time axis for all models" $?
grep -q 'makespan (last job done)' "$tmp/runs.html" && grep -q 'class="censored"' "$tmp/runs.html"
check "runs page: makespan row and censored waits marked" $?

python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["carve"], sys.stdout)' \
	"$fixture" >"$tmp/run.json"
"$carve" report - --title '<run> & co' <"$tmp/run.json" >"$tmp/run.html"
check "one run from standard input to standard output exits 0" $?
grep -q '<th>value</th>' "$tmp/run.html" && ! grep -q '<th>difference</th>' "$tmp/run.html"
check "one run has a one-column table" $?
grep -q '<h1>&lt;run&gt; &amp; co</h1>' "$tmp/run.html"
check "--title is escaped" $?
[ "$(charts "$tmp/run.html")" = "6 6" ]
check "one run: 6 charts with data" $?
self_contained "$tmp/run.html"
check "run page refers to nothing outside itself" $?

"$carve" report >/dev/null 2>&1
check "no argument is a usage error (2)" $(($? == 2 ? 0 : 1))
"$carve" report a.json b.json >/dev/null 2>&1
check "two arguments are a usage error (2)" $(($? == 2 ? 0 : 1))
"$carve" report --help | grep -q 'usage: carve report'
check "--help" $?
"$carve" report "$tmp/nonexistent.json" -o "$tmp/x.html" 2>"$tmp/err"
check "missing file exits 1" $(($? == 1 ? 0 : 1))
[ ! -e "$tmp/x.html" ]
check "no page for a missing file" $?
printf '{"mode": "replay",\n  "seed": }\n' >"$tmp/bad.json"
"$carve" report "$tmp/bad.json" -o "$tmp/x.html" 2>"$tmp/err"
check "malformed JSON exits 1" $(($? == 1 ? 0 : 1))
grep -q "bad.json:2:" "$tmp/err"
ok=$?   # before the message runs commands of its own
check "malformed JSON: file:line:col on stderr (got: $(cat "$tmp/err"))" $ok
echo '[1, 2]' >"$tmp/array.json"
"$carve" report "$tmp/array.json" -o "$tmp/x.html" 2>"$tmp/err"
check "a JSON array exits 1" $(($? == 1 ? 0 : 1))
grep -q "not a JSON object" "$tmp/err" && [ ! -e "$tmp/x.html" ]
check "a JSON array: message, and the half-made page removed" $?
"$carve" report "$fixture" -o "$tmp/no/such/dir/x.html" 2>/dev/null
check "unwritable output exits 1" $(($? == 1 ? 0 : 1))
if [ -w /dev/full ]; then
	"$carve" report "$fixture" >/dev/full 2>"$tmp/err"
	check "write failure (/dev/full) exits 1" $(($? == 1 ? 0 : 1))
fi

# ---- output that cannot lie or destroy ----------------------------------------

# A failed write never removes what carve did not create: an existing page
# stays as it was (mode too), a symlink stays a link to the file it names,
# a device node or FIFO is written directly and left in place.
printf 'old page\n' >"$tmp/keep.html"
chmod 640 "$tmp/keep.html"
"$carve" report "$tmp/array.json" -o "$tmp/keep.html" 2>/dev/null
check "refused result exits 1" $(($? == 1 ? 0 : 1))
[ "$(cat "$tmp/keep.html")" = "old page" ]
check "refused result: the existing page is left as it was" $?
"$carve" report "$fixture" -o "$tmp/keep.html" 2>"$tmp/err"
check "report over an existing page exits 0" $?
[ "$(stat -c %a "$tmp/keep.html")" = 640 ] && grep -q '</html>' "$tmp/keep.html"
check "replaced page keeps its mode (640)" $?
[ -z "$(find "$tmp" -maxdepth 1 -name '.carve-*')" ]
check "no temporary file left beside the page" $?
long=$(printf 'p%.0s' $(seq 245)).html
"$carve" report "$fixture" -o "$tmp/$long" 2>"$tmp/err"
ok=$?   # before the message runs commands of its own
check "a file name of 250 bytes: written (got: $(cat "$tmp/err"))" $ok
ln -s keep.html "$tmp/link.html"
"$carve" report "$tmp/array.json" -o "$tmp/link.html" 2>/dev/null
[ -L "$tmp/link.html" ] && [ -f "$tmp/keep.html" ]
check "refused result: a symlink target is not removed" $?
"$carve" report "$fixture" -o "$tmp/link.html" --title 'through the link' 2>/dev/null
[ -L "$tmp/link.html" ] && grep -q 'through the link' "$tmp/keep.html"
check "a symlink stays a link; the file it names gets the page" $?
if mknod "$tmp/full" c 1 7 2>/dev/null; then
	"$carve" report "$fixture" -o "$tmp/full" 2>"$tmp/err"
	check "write to a full device exits 1" $(($? == 1 ? 0 : 1))
	[ -c "$tmp/full" ]
	check "the device node is not removed" $?
	grep -q "^carve report: cannot write $tmp/full: No space left on device$" "$tmp/err"
	ok=$?
	check "device write failure says why (got: $(cat "$tmp/err"))" $ok
else
	echo "SKIP: mknod not permitted: the device-node checks"
fi
mkfifo "$tmp/fifo"
cat "$tmp/fifo" >"$tmp/fifo.out" &
reader=$!
"$carve" report "$fixture" -o "$tmp/fifo" 2>/dev/null
check "report into a FIFO exits 0" $?
wait "$reader"
[ -p "$tmp/fifo" ] && grep -q '</html>' "$tmp/fifo.out"
check "a FIFO is written directly and stays a FIFO" $?
if [ -w /dev/full ]; then
	grep -q '^carve report: cannot write output: No space left on device$' "$tmp/err" ||
		"$carve" report "$fixture" >/dev/full 2>"$tmp/err"
	grep -q '^carve report: cannot write output: No space left on device$' "$tmp/err"
	ok=$?
	check "standard output full: says so (got: $(cat "$tmp/err"))" $ok
fi

# Errors name the input: no jansson -1 positions, a directory said to be
# one, a field of the wrong type by its JSON path.
"$carve" report "$tmp/nonexistent.json" 2>"$tmp/err"
grep -q "^carve report: $tmp/nonexistent.json: No such file or directory$" "$tmp/err"
ok=$?
check "missing input: no position (got: $(cat "$tmp/err"))" $ok
"$carve" report "$tmp" 2>"$tmp/err"
check "a directory as input exits 1" $(($? == 1 ? 0 : 1))
grep -q "^carve report: $tmp: is a directory" "$tmp/err"
ok=$?
check "a directory as input is said to be one (got: $(cat "$tmp/err"))" $ok
printf '{"carve": {"queues": {"a": {"nominal": 1}, "b": {"nominal": "16"}}}}\n' >"$tmp/r.json"
"$carve" report "$tmp/r.json" -o "$tmp/r.html" 2>"$tmp/err"
check "a field of the wrong type exits 1" $(($? == 1 ? 0 : 1))
grep -q "^carve report: $tmp/r.json: carve.queues.b.nominal: expected a number, got string$" \
	"$tmp/err" && [ ! -e "$tmp/r.html" ]
ok=$?
check "wrong type: input file and JSON path, no page (got: $(cat "$tmp/err"))" $ok
printf '{"mode": "replay", "series": {"t_s": [0, 60], "quota_used": {"q\\u001b[31m": [1, "x"]}}}' |
	"$carve" report - >/dev/null 2>"$tmp/err"
grep -q '^carve report: <stdin>: series.quota_used\["q\\x1B\[31m"\]\[1\]: expected a number, got string$' \
	"$tmp/err"
ok=$?
check "wrong type from standard input, key escaped (got: $(cat "$tmp/err"))" $ok

# ---- headless chromium -------------------------------------------------------

# browser NAME ARGS...: chromium headless, stderr in $tmp/NAME.err.
browser() {
	local name=$1
	shift
	HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_CACHE_HOME="$tmp/home/.cache" \
		timeout 40 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
		--no-default-browser-check --disable-extensions --disable-background-networking --disable-dev-shm-usage \
		--user-data-dir="$tmp/profile-$name" --enable-logging=stderr --v=0 \
		"$@" 2>"$tmp/$name.err"
}

# console NAME: the console messages chromium logged for run NAME.
console() {
	grep -E 'CONSOLE[(:]' "$tmp/$1.err"
}

chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
	echo "SKIP: chromium not installed: the page is not rendered (scripts/setup-debian.sh installs it)"
else
	mkdir -p "$tmp/home" "$art" || exit 1
	unset DISPLAY WAYLAND_DISPLAY

	# The detector must see a console error, an uncaught exception and a
	# bad SVG attribute on a page made to have them.
	cat >"$tmp/broken.html" <<'EOF'
<!DOCTYPE html><html><head><meta charset="utf-8"><title>broken</title></head>
<body><svg viewBox="0 0 10 10"><path d="M x y"/></svg>
<script>console.error("deliberate console error"); noSuchFunction();</script></body></html>
EOF
	browser broken --dump-dom "file://$tmp/broken.html" >"$tmp/broken.dom"
	check "chromium runs on the broken page" $?
	n=$(console broken | wc -l)
	[ "$n" -ge 3 ] && console broken | grep -q noSuchFunction &&
		console broken | grep -q 'attribute d'
	check "console detector fires on the broken page (3 messages expected, got $n)" $?

	# One run gives both the screenshot and the DOM after rendering.
	rm -f "$art/report.png"
	browser page --screenshot="$art/report.png" --window-size=1280,2000 \
		--dump-dom "file://$tmp/compare.html" >"$tmp/compare.dom"
	check "chromium renders the compare page (exit 0)" $?
	size=$(wc -c <"$art/report.png" 2>/dev/null || echo 0)
	[ "$size" -gt 20000 ] && [ "$(head -c 4 "$art/report.png" | tail -c 3)" = PNG ]
	check "screenshot $art/report.png is a non-trivial PNG ($size bytes)" $?
	[ "$(charts "$tmp/compare.dom")" = "$charts_expected $charts_expected" ]
	ok=$?   # before the message runs commands of its own
	check "rendered DOM: $charts_expected charts with data (got $(charts "$tmp/compare.dom"))" $ok
	grep -q '<th>difference</th>' "$tmp/compare.dom"
	check "rendered DOM has the side-by-side table" $?
	[ -z "$(console page)" ]
	ok=$?   # before the message runs commands of its own
	check "no console message on the compare page: $(console page)" $ok
	cp "$tmp/compare.html" "$art/report.html"

	# The four-model page of the current shape, the same way.
	rm -f "$art/report-runs.png"
	browser runs --screenshot="$art/report-runs.png" --window-size=1280,2400 \
		--dump-dom "file://$tmp/runs.html" >"$tmp/runs.dom"
	check "chromium renders the four-model page (exit 0)" $?
	size=$(wc -c <"$art/report-runs.png" 2>/dev/null || echo 0)
	[ "$size" -gt 20000 ]
	check "screenshot $art/report-runs.png is a non-trivial PNG ($size bytes)" $?
	[ "$(charts "$tmp/runs.dom")" = "$runs_charts $runs_charts" ]
	ok=$?
	check "rendered DOM: $runs_charts charts with data (got $(charts "$tmp/runs.dom"))" $ok
	grep -q '<h2>Settings</h2>' "$tmp/runs.dom"
	check "rendered DOM has the settings" $?
	[ -z "$(console runs)" ]
	ok=$?
	check "no console message on the four-model page: $(console runs)" $ok
	cp "$tmp/runs.html" "$art/report-runs.html"
	echo "artifacts: $art/report.png $art/report.html $art/report-runs.png $art/report-runs.html"
fi

echo "report: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
