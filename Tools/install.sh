#!/usr/bin/env bash
# Builds multidoc's three executables for release, with the Swift runtime linked in, and installs
# them under a prefix with their man pages, shell completions and the systemd user unit.
#
#   Tools/install.sh                      # into ~/.local (bin/, share/man/man1/, share/…/completions)
#   Tools/install.sh --prefix /opt/multidoc
#   Tools/install.sh --no-build           # install what .build/release already holds
#
# Nothing outside the prefix is touched, except the systemd user unit with --systemd
# (~/.config/systemd/user/multidocd.service). Uninstall: Tools/install.sh --uninstall [--prefix P].
set -euo pipefail
cd "$(dirname "$0")/.."

prefix="$HOME/.local"
from=""
build=1
systemd=0
uninstall=0
products=(multidoc multidoc-tui multidocd)

usage() {
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    echo
    echo "Options: --prefix DIR, --no-build, --from DIR (binaries built elsewhere), --systemd, --uninstall, --help"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: error: --prefix needs a folder" >&2; exit 64; }; prefix="$2"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --no-build) build=0; shift ;;
        --from) [ $# -ge 2 ] || { echo "install.sh: error: --from needs a folder" >&2; exit 64; }; from="$2"; build=0; shift 2 ;;
        --systemd) systemd=1; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install.sh: error: unknown option '$1' (see 'Tools/install.sh --help')" >&2; exit 64 ;;
    esac
done
case "$prefix" in /*) ;; *) prefix="$PWD/$prefix" ;; esac

bin="$prefix/bin"
man="$prefix/share/man/man1"
bash_completions="$prefix/share/bash-completion/completions"
zsh_completions="$prefix/share/zsh/site-functions"
fish_completions="$prefix/share/fish/vendor_completions.d"
unit="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user/multidocd.service"

if [ "$uninstall" = 1 ]; then
    for product in "${products[@]}"; do
        rm -f "$bin/$product" "$man/$product.1" "$bash_completions/$product" "$zsh_completions/_$product" "$fish_completions/$product.fish"
    done
    echo "removed multidoc from $prefix (device roots and containers are left alone)"
    [ -f "$unit" ] && echo "the systemd unit $unit is still there: systemctl --user disable --now multidocd; rm '$unit'"
    exit 0
fi

if [ "$build" = 1 ]; then
    echo "install.sh: building for release with the Swift runtime linked in (a few minutes the first time) …" >&2
    for product in "${products[@]}"; do
        swift build -c release --static-swift-stdlib --product "$product"
    done
fi
release="${from:-$(swift build -c release --static-swift-stdlib --show-bin-path)}"
for product in "${products[@]}"; do
    [ -x "$release/$product" ] || { echo "install.sh: error: $release/$product is not built; run without --no-build" >&2; exit 1; }
done

# A man page made from the command's own --help and each subcommand's (troff, read with man).
man_page() {
    local executable="$1" name="$2"
    local upper abstract
    upper="$(echo "$name" | tr '[:lower:]' '[:upper:]')"
    abstract="$("$executable" --help | sed -n '/^OVERVIEW: /,/^$/p' | tr '\n' ' ' | sed -e 's/^OVERVIEW: //' -e 's/ *$//')"
    echo ".TH $upper 1 \"\" \"$("$executable" --version)\" \"User Commands\""
    echo ".SH NAME"
    echo "$name \\- $abstract"
    echo ".SH DESCRIPTION"
    echo ".nf"
    "$executable" --help | escape_troff
    echo ".fi"
    # The subcommands, and theirs (multidoc settings set, multidoc container verify, …).
    local sub subsub
    for sub in $(subcommands "$executable"); do
        echo ".SH $(echo "$name $sub" | tr '[:lower:]' '[:upper:]')"
        echo ".nf"
        "$executable" "$sub" --help | escape_troff
        echo ".fi"
        for subsub in $("$executable" "$sub" --help | subcommand_names); do
            echo ".SS $name $sub $subsub"
            echo ".nf"
            "$executable" "$sub" "$subsub" --help | escape_troff
            echo ".fi"
        done
    done
}
escape_troff() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"; }
subcommand_names() { sed -n '/^SUBCOMMANDS:/,/^$/p' | sed -n 's/^  \([a-z][a-z0-9-]*\).*/\1/p' | grep -v '^help$' || true; }
subcommands() { "$1" --help | subcommand_names; }

mkdir -p "$bin" "$man" "$bash_completions" "$zsh_completions" "$fish_completions"
for product in "${products[@]}"; do
    install -m 0755 "$release/$product" "$bin/$product.new"
    strip "$bin/$product.new" 2>/dev/null || true
    mv -f "$bin/$product.new" "$bin/$product"
    "$bin/$product" --generate-completion-script bash > "$bash_completions/$product"
    "$bin/$product" --generate-completion-script zsh > "$zsh_completions/_$product"
    "$bin/$product" --generate-completion-script fish > "$fish_completions/$product.fish"
    man_page "$bin/$product" "$product" > "$man/$product.1"
done

if [ "$systemd" = 1 ]; then
    mkdir -p "$(dirname "$unit")"
    sed -e "s|%h/.local/bin/multidocd|$bin/multidocd|" -e "s|@DOCS@|file://$PWD/Docs/DAEMON.md|" Docs/multidocd.service > "$unit"
    echo "installed $unit; start it with: systemctl --user daemon-reload && systemctl --user enable --now multidocd"
fi

echo "installed multidoc, multidoc-tui and multidocd into $bin"
case ":$PATH:" in *":$bin:"*) ;; *) echo "add $bin to your PATH: export PATH=\"$bin:\$PATH\"" ;; esac
echo "man pages: $man (man multidoc); completions for bash, zsh and fish under $prefix/share"
echo "next: multidoc init"
