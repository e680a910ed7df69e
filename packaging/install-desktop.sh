#!/bin/sh
# Install the built bundle (dist/factdesk, from `make package`) for the current user on a
# freedesktop desktop (GNOME, KDE, ...): the program under ~/.local/opt/factdesk, the
# `factdesk` command in ~/.local/bin, the menu entry, the icons and the AppStream metainfo.
#
#   packaging/install-desktop.sh [BUNDLE_DIR]        (default: dist/factdesk)
#
# XDG_DATA_HOME and PREFIX (default ~/.local) move the targets. Run it again to update;
# remove with: rm -rf ~/.local/opt/factdesk ~/.local/bin/factdesk and the files it lists.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
files="$here/../app/factdesk/desktop_data"  # the entry, metainfo and icons (package data)
bundle=${1:-"$here/../dist/factdesk"}
prefix=${PREFIX:-"$HOME/.local"}
data=${XDG_DATA_HOME:-"$HOME/.local/share"}
app_id=org.factdesk.factdesk

[ -x "$bundle/factdesk" ] || { echo "no bundle at $bundle (run make package first)" >&2; exit 1; }
mkdir -p "$prefix/opt" "$prefix/bin" "$data/applications" "$data/metainfo"
rm -rf "$prefix/opt/factdesk.new"
cp -a "$bundle" "$prefix/opt/factdesk.new"
rm -rf "$prefix/opt/factdesk"
mv "$prefix/opt/factdesk.new" "$prefix/opt/factdesk"
ln -sf "$prefix/opt/factdesk/factdesk" "$prefix/bin/factdesk"
echo "$prefix/opt/factdesk/  $prefix/bin/factdesk"

# the menu entry runs the installed program by its full path (~/.local/bin may not be on
# the PATH a desktop session starts programs with)
sed -e "s|^Exec=factdesk |Exec=$prefix/opt/factdesk/factdesk |" \
    -e "s|^TryExec=factdesk$|TryExec=$prefix/opt/factdesk/factdesk|" \
    "$files/$app_id.desktop" > "$data/applications/$app_id.desktop"
cp "$files/$app_id.metainfo.xml" "$data/metainfo/"
echo "$data/applications/$app_id.desktop  $data/metainfo/$app_id.metainfo.xml"
for png in "$files"/icons/factdesk-*.png; do
    size=${png##*-}; size=${size%.png}
    mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
    cp "$png" "$data/icons/hicolor/${size}x${size}/apps/$app_id.png"
done
mkdir -p "$data/icons/hicolor/scalable/apps"
cp "$files/icons/factdesk.svg" "$data/icons/hicolor/scalable/apps/$app_id.svg"
echo "$data/icons/hicolor/*/apps/$app_id.{png,svg}"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$data/icons/hicolor" || true
