#!/usr/bin/env bash
# Renders a report in headless chromium, checks that every image on the page loaded, and saves
# a screenshot to look at.
#
#   tests/report_screenshot.sh RESULTS_DIR|PAGE.html [SCREENSHOT.png]
#
# RESULTS_DIR means RESULTS_DIR/report.html; compare pages (compare.html) work too. The page's
# own script (report_html_end in analysis/report.c) records on <body>, once everything has
# loaded, how many images there are and which failed (data-images, data-images-failed); this
# script reads them back from the DOM chromium dumps.
# Environment: MIN_IMAGES (default 1) images the page must have; HEIGHT (default 3000) of the
# screenshot window; CHROMIUM to name the browser.
# Exit status: 0 all images loaded, 1 an image failed or the page is wrong, 77 no chromium.
set -u
target=${1:?usage: $0 RESULTS_DIR|PAGE.html [SCREENSHOT.png]}
if [ -d "$target" ]; then page=$target/report.html; else page=$target; fi
[ -f "$page" ] || { echo "report_screenshot: $page: no such page" >&2; exit 1; }
page=$(realpath "$page")
shot=${2:-${TMPDIR:-/tmp}/$(basename "$page" .html)-screenshot.png}
min=${MIN_IMAGES:-1}

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
  for b in chromium chromium-browser google-chrome; do
    command -v "$b" >/dev/null 2>&1 && { browser=$b; break; }
  done
fi
[ -n "$browser" ] || { echo "report_screenshot: chromium not found: check skipped" >&2; exit 77; }

profile=$(mktemp -d)
dom=$(mktemp)
trap 'rm -rf "$profile" "$dom"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
       --disable-background-networking --disable-component-update --disable-sync
       --hide-scrollbars --user-data-dir="$profile")

# --dump-dom prints the DOM after the load event, i.e. after every image loaded or failed.
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$page" >"$dom" 2>/dev/null
body=$(grep -o '<body[^>]*>' "$dom" | head -1)
if [ -z "$body" ]; then
  echo "report_screenshot: chromium produced no DOM for $page" >&2; exit 1
fi
attr() { printf '%s' "$body" | sed -n "s/.* $1=\"\\([^\"]*\\)\".*/\\1/p"; }
total=$(attr data-images); ok=$(attr data-images-ok); failed=$(attr data-images-failed)
if [ -z "$total" ]; then
  echo "report_screenshot: $page has no image check (data-images missing on <body>)" >&2; exit 1
fi
in_source=$(grep -o '<img ' "$page" | wc -l)
status=0
if [ "$total" != "$in_source" ]; then
  echo "report_screenshot: $total images in the DOM, $in_source in the page source" >&2; status=1
fi
if [ -n "$failed" ] || [ "$ok" != "$total" ]; then
  echo "report_screenshot: images that did not load: ${failed:-?} ($ok of $total loaded)" >&2
  status=1
fi
if [ "$total" -lt "$min" ]; then
  echo "report_screenshot: $total images, expected at least $min" >&2; status=1
fi

rm -f "$shot"
timeout 120 "$browser" "${flags[@]}" --screenshot="$shot" --window-size=1200,"${HEIGHT:-3000}" \
  "file://$page" >/dev/null 2>&1
if [ "$(head -c 8 "$shot" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
  echo "report_screenshot: no screenshot written to $shot" >&2; status=1
fi
[ $status -eq 0 ] && echo "report_screenshot: $ok of $total images loaded; screenshot $shot"
exit $status
