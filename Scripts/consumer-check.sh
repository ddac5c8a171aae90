#!/usr/bin/env bash
# What an app resolves when it depends on one Courier product: a throwaway package beside the checkout
# depends on this repository (by a file URL of its git history, as a registry or GitHub dependency would be
# resolved) with the traits that product needs, and the pins of its Package.resolved are counted. Fails when
# the core alone (`Courier`, default traits) resolves more than 3 packages, Courier itself included.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The committed state of the checkout (what a consumer would fetch).
git clone -q "$root" "$work/courier"
branch="$(git -C "$work/courier" rev-parse --abbrev-ref HEAD)"

check() { # product, traits (comma-separated, may be empty)
    local product="$1" traits="$2" app="$work/app-$1-${2//,/-}"
    mkdir -p "$app/Sources/App"
    local trait_list=""
    [[ -n "$traits" ]] && trait_list=", traits: [$(sed 's/\([^,]*\)/"\1"/g' <<<"$traits")]"
    cat >"$app/Package.swift" <<MANIFEST
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "App",
    platforms: [.macOS(.v15)],
    dependencies: [.package(url: "file://$work/courier", branch: "$branch"$trait_list)],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "$product", package: "courier")])]
)
MANIFEST
    echo 'print("app")' >"$app/Sources/App/main.swift"
    swift package --package-path "$app" resolve >/dev/null 2>&1 || swift package --package-path "$app" resolve
    local count
    count=$(grep -c '"identity"' "$app/Package.resolved" || true)
    printf '%-24s %-28s %2s packages: %s\n' "$product" "${traits:-(default)}" "$count" \
        "$(grep '"identity"' "$app/Package.resolved" | sed 's/.*: "\(.*\)".*/\1/' | tr '\n' ' ')"
    echo "$count"  >"$app/count"
}

check Courier ""
check CourierCodecs ""
check CourierSchema ""
check CourierResilience ""
check CourierTesting ""
check CourierCodecsTesting ""
check CourierObservability ""
check CourierSecurity Security
check CourierCache Cache
check CourierObservability Metrics,Tracing
check CourierAsyncHTTPClient AsyncHTTPClient
check CourierOpenAPI OpenAPI
check CourierMacros Macros

core=$(cat "$work/app-Courier-/count")
if (( core > 3 )); then
    echo "the core resolves $core packages (at most 3 allowed)" >&2
    exit 1
fi
