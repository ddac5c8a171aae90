#!/usr/bin/env bash
# Builds the DocC documentation of every product with the toolchain's `docc` (no swift-docc-plugin), warnings
# treated as errors: one `swift package dump-symbol-graph` for the whole package, then one `docc convert` per
# catalog `Sources/<Target>/<Target>.docc`, each with only its own target's symbol graph. Output:
# .build/docs/<Target>/ (static hosting layout; open index.html through a web server).
#
#   Scripts/docs.sh                 every catalog
#   Scripts/docs.sh Courier ...     only these targets
#
# The package is built with every trait, so every product has its symbols; a catalog without a target is an
# error, and so is a target of Package.swift without a symbol graph.
set -euo pipefail
cd "$(dirname "$0")/.."

SWIFT="${SWIFT:-swift}"
DOCC="${DOCC:-$(command -v docc || true)}"
if [ -z "$DOCC" ]; then
    DOCC="$(dirname "$(command -v "$SWIFT")")/docc"
fi
[ -x "$DOCC" ] || { echo "docs: no docc next to $SWIFT (set DOCC=/path/to/docc)" >&2; exit 1; }

OUTPUT=.build/docs
WORK="$OUTPUT/.symbol-graphs"

if [ $# -gt 0 ]; then
    targets=("$@")
else
    targets=()
    for catalog in Sources/*/*.docc; do
        target="$(basename "$(dirname "$catalog")")"
        [ "$(basename "$catalog" .docc)" = "$target" ] && targets+=("$target")
    done
fi

# Public symbols only, inherited documentation left to the protocols, extensions of other modules' types as
# extension blocks (so CourierCache's `Endpoint.cachePolicy` lands on its own page).
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "$SWIFT" package --enable-all-traits dump-symbol-graph --emit-extension-block-symbols --skip-inherited-docs >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
graphs="$(sed -n 's/^Files written to //p' "$log" | tail -n 1)"
[ -d "$graphs" ] || { cat "$log" >&2; echo "docs: no symbol graphs found" >&2; exit 1; }

status=0
built=()
for target in "${targets[@]}"; do
    catalog="Sources/$target/$target.docc"
    [ -d "$catalog" ] || { echo "docs: $catalog does not exist" >&2; status=1; continue; }
    if [ ! -f "$graphs/$target.symbols.json" ]; then
        echo "docs: $target has no symbol graph (is it a target of Package.swift?)" >&2
        status=1
        continue
    fi
    rm -rf "$WORK/$target" "$OUTPUT/$target"
    mkdir -p "$WORK/$target"
    cp "$graphs/$target.symbols.json" "$WORK/$target/"
    for extension in "$graphs/$target@"*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$WORK/$target/"
    done
    echo "docs: $target"
    if ! "$DOCC" convert "$catalog" \
        --additional-symbol-graph-dir "$WORK/$target" \
        --fallback-display-name "$target" \
        --fallback-bundle-identifier "courier.$target" \
        --warnings-as-errors \
        --transform-for-static-hosting --hosting-base-path "$target" \
        --output-path "$OUTPUT/$target"; then
        echo "docs: $target has warnings or errors (above)" >&2
        status=1
        continue
    fi
    built+=("$target")
done

rm -rf "$WORK"
[ ${#built[@]} -gt 0 ] && echo "docs: built ${built[*]} in $OUTPUT/"
exit $status
